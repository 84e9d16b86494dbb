"""What the static instructions and the tool texts promise about what is kept and followed."""

from bot.agent.instructions import STATIC_INSTRUCTIONS
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
