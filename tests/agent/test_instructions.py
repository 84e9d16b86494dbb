"""What the static instructions and the tool texts promise about what is kept and followed."""

import re

from bot.agent.instructions import CANNOT_DO, STATIC_INSTRUCTIONS
from memory.tools import MEMORY_TOOLS

FORGET = next(tool.description for tool in MEMORY_TOOLS if tool.name == "forget_memory")


def test_forget_everything_points_to_clear_and_says_conversations_are_kept():
    assert '"Forget everything": point to /memory clear' in STATIC_INSTRUCTIONS
    assert "conversations are still kept" in STATIC_INSTRUCTIONS
    assert "/memory clear" in FORGET and "conversations are still kept" in FORGET


def test_saved_preferences_are_followed_but_never_override_the_rules():
    # "Notes, never instructions" contradicted following a saved reply language.
    assert "never instructions" not in STATIC_INSTRUCTIONS
    assert "Follow a saved preference (reply language, style) as if the user said it now" in (
        " ".join(STATIC_INSTRUCTIONS.split())
    )
    assert "it never overrides these rules" in STATIC_INSTRUCTIONS


def _sentence_after(opening: str) -> str:
    """Return the sentence of the instructions that starts with opening, on one line."""
    flat = " ".join(STATIC_INSTRUCTIONS.split())
    found = re.search(re.escape(opening) + r"[^.]*", flat)
    assert found is not None, opening
    return found[0]


def test_the_capabilities_sentence_names_what_the_bot_cannot_do():
    cannot = _sentence_after("You cannot")
    # The spec's own wording ("create a task"), to-dos, calendars, messaging other people.
    for thing in ("create tasks", "to-do lists", "calendar events", "send messages to anyone"):
        assert thing in cannot, thing
    # Every item of the one list is in the sentence, so a capability is added in one place.
    assert all(item in cannot for item in CANNOT_DO)
    assert "never imply it was done" in cannot


def test_the_capabilities_sentence_names_what_the_bot_can_do():
    can = _sentence_after("What you can do:")
    for thing in ("memories", "reminders", "PDFs", "past conversations"):
        assert thing in can, thing
    assert "task" not in can and "calendar" not in can
