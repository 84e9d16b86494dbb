"""What a reply's sources show: its "Based on N memories" button, and the list it opens.

The list names each memory the reply cited (id, content, last change) with Forget and Pin
beside it; their callback data name the memory and the stored turn whose sources they are.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import tzinfo

from bot.telegram.format.rich import HTML, MARKDOWN, Markup, rich_list
from bot.telegram.memories import texts
from bot.telegram.ui import Button, View, callback_data
from memory.ids import ID_REGEX
from memory.items import MemoryItem
from memory.text import shorten

# Every callback data of a sources button starts so.
PREFIX = "s:"
# The most memories one list shows (a search returns 10; the block adds a few).
MAX_SHOWN = 12
CONTENT_CLIP = 300
FORGET_BUTTON = "Forget"
LIST_HEAD = "<b>This reply was based on:</b>"
RICH_HEAD = "**This reply was based on:**"


@dataclass(frozen=True)
class ShowSources:
    """Show the memories a stored reply drew on."""

    turn_id: int


@dataclass(frozen=True)
class ForgetSource:
    """Forget one memory of a reply's sources, then show them again."""

    memory_id: str
    turn_id: int


@dataclass(frozen=True)
class PinSource:
    """Pin (or unpin) one memory of a reply's sources, then show them again."""

    memory_id: str
    turn_id: int
    pinned: bool


SourceAction = ShowSources | ForgetSource | PinSource

_TURN = r"([1-9][0-9]{0,17})"
_SHOW = re.compile(rf"s:{_TURN}")
_FORGET = re.compile(rf"s:d:({ID_REGEX}):{_TURN}")
_PIN = re.compile(rf"s:([+-]):({ID_REGEX}):{_TURN}")


def encode(action: SourceAction) -> str:
    """Return the callback data of a sources action."""
    match action:
        case ShowSources(turn_id):
            return callback_data("s", turn_id)
        case ForgetSource(memory_id, turn_id):
            return callback_data("s", "d", memory_id, turn_id)
        case PinSource(memory_id, turn_id, pinned):
            return callback_data("s", "+" if pinned else "-", memory_id, turn_id)


def parse(data: str | None) -> SourceAction | None:
    """Return the sources action of a button's callback data, or None if it is not one."""
    data = data or ""
    if match := _SHOW.fullmatch(data):
        return ShowSources(int(match[1]))
    if match := _FORGET.fullmatch(data):
        return ForgetSource(match[1], int(match[2]))
    if match := _PIN.fullmatch(data):
        return PinSource(match[2], int(match[3]), match[1] == "+")
    return None


def based_on(count: int) -> str:
    """Label the button under a reply: "Based on 1 memory", "Based on 3 memories"."""
    return f"Based on {texts.count_memories(count)}"


def reply_buttons(turn_id: int | None, cited: Sequence[str]) -> tuple[tuple[Button, ...], ...]:
    """Return the button row under a reply that drew on memories, or none."""
    if turn_id is None or not cited:
        return ()
    return ((Button(based_on(len(cited)), encode(ShowSources(turn_id))),),)


def _line(item: MemoryItem, zone: tzinfo, markup: Markup = HTML) -> str:
    """Render one source: its id, content, subject and last change; struck if forgotten."""
    content = markup.escape(shorten(item.content, CONTENT_CLIP))
    subject = (
        f" {markup.italic.format(text=f'({markup.escape(item.subject)})')}" if item.subject else ""
    )
    code = markup.code.format(text=f"[{item.id}]")
    if item.deleted_at is not None:
        return f"{code} {markup.struck.format(text=content)}{subject} · forgotten"
    pin = texts.PINNED_MARK if item.pinned else ""
    changed = f"changed {item.updated_at.astimezone(zone):%Y-%m-%d}"
    return f"{pin}{code} {content}{subject} · {changed}"


def _rich_list(items: Sequence[MemoryItem], zone: tzinfo, more: str) -> str | None:
    """Return the list as a Rich Message's Markdown if it is long enough to read better so."""
    lines = [RICH_HEAD, "", *(f"- {_line(item, zone, MARKDOWN)}" for item in items)]
    markdown = "\n".join([*lines, *(["", more] if more else [])])
    return markdown if rich_list(len(items), markdown) else None


def sources_list(
    turn_id: int, items: Sequence[MemoryItem], zone: tzinfo, *, rich: bool = False
) -> View:
    """Render the memories a reply drew on, with Forget and Pin beside each one still kept.

    With rich (RICH_MESSAGES), a long list goes as a Rich Message, one list item a memory.
    """
    shown = items[:MAX_SHOWN]
    more = len(items) - len(shown)
    lines = [LIST_HEAD, *(_line(item, zone) for item in shown)]
    tail = f"…and {texts.count_memories(more)} more; /memory lists them all." if more else ""
    if tail:
        lines.append(tail)
    rows = tuple(
        (
            Button(f"{FORGET_BUTTON} [{item.id}]", encode(ForgetSource(item.id, turn_id))),
            Button(texts.pin_button(item), encode(PinSource(item.id, turn_id, not item.pinned))),
        )
        for item in shown
        if item.deleted_at is None
    )
    markdown = _rich_list(shown, zone, tail) if rich else None
    return View("\n\n".join(lines), rows, markdown)
