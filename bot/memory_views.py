"""What /memory shows with buttons, and the callback data of those buttons: all pure."""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot import texts
from memory.budget import MemoryUsage
from memory.ids import ID_REGEX
from memory.store import MemoryItem
from memory.tools import MemoryChange

# Telegram refuses callback data over 64 bytes.
MAX_CALLBACK_BYTES = 64
MAX_PER_PAGE = 10
# Room for a page's memory lines; the state header and the footer fit in the rest of 4096.
MAX_PAGE_UNITS = 3600
# A category heading and the blank lines around it, charged to every line to be safe.
HEADING_UNITS = 30
MAX_CHANGES_PER_NOTICE = 8
UNDO_BUTTONS_PER_ROW = 4


@dataclass(frozen=True)
class Button:
    """An inline button: its label and its callback data."""

    label: str
    data: str


@dataclass(frozen=True)
class View:
    """A message to send or edit: HTML text and rows of inline buttons."""

    text: str
    buttons: tuple[tuple[Button, ...], ...] = ()


@dataclass(frozen=True)
class ShowPage:
    """Show one page of the memory list."""

    page: int


@dataclass(frozen=True)
class DeleteFromPage:
    """Forget a memory from a page, then show that page again."""

    memory_id: str
    page: int


@dataclass(frozen=True)
class AnswerClear:
    """Confirm or cancel forgetting everything."""

    confirmed: bool


@dataclass(frozen=True)
class Undo:
    """Undo one logged change the agent made."""

    change_id: int


Action = ShowPage | DeleteFromPage | AnswerClear | Undo

_SHOW_PAGE = re.compile(r"m:p:([1-9][0-9]{0,5})")
_DELETE = re.compile(rf"m:d:({ID_REGEX}):([1-9][0-9]{{0,5}})")
_CLEAR = re.compile(r"m:c:([yn])")
_UNDO = re.compile(r"u:([1-9][0-9]{0,17})")


def encode(action: Action) -> str:
    """Return the callback data of an action."""
    match action:
        case ShowPage(page):
            data = f"m:p:{page}"
        case DeleteFromPage(memory_id, page):
            data = f"m:d:{memory_id}:{page}"
        case AnswerClear(confirmed):
            data = f"m:c:{'y' if confirmed else 'n'}"
        case Undo(change_id):
            data = f"u:{change_id}"
    if len(data.encode("utf-8")) > MAX_CALLBACK_BYTES:
        raise ValueError(f"callback data over {MAX_CALLBACK_BYTES} bytes: {data!r}")
    return data


def parse_callback(data: str | None) -> Action | None:
    """Return the action of a button's callback data, or None if it is not one of ours."""
    data = data or ""
    if match := _SHOW_PAGE.fullmatch(data):
        return ShowPage(int(match[1]))
    if match := _DELETE.fullmatch(data):
        return DeleteFromPage(match[1], int(match[2]))
    if match := _CLEAR.fullmatch(data):
        return AnswerClear(match[1] == "y")
    if match := _UNDO.fullmatch(data):
        return Undo(int(match[1]))
    return None


def utf16_units(text: str) -> int:
    """Count text the way Telegram measures messages, in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def paginate(items: Sequence[MemoryItem]) -> list[list[MemoryItem]]:
    """Split memories, in order, into pages that fit one Telegram message each."""
    pages: list[list[MemoryItem]] = []
    current: list[MemoryItem] = []
    used = 0
    for item in items:
        # HTML is never shorter than the text Telegram counts, so this bound is safe.
        cost = utf16_units(texts.memory_line(item)) + HEADING_UNITS
        if current and (len(current) == MAX_PER_PAGE or used + cost > MAX_PAGE_UNITS):
            pages.append(current)
            current, used = [], 0
        current.append(item)
        used += cost
    if current:
        pages.append(current)
    return pages


def memory_page(
    items: Sequence[MemoryItem], usage: MemoryUsage, enabled: bool, page: int
) -> tuple[View, int]:
    """Render one page of the memory list, with its buttons; return it and its page number."""
    if not items:
        return View(texts.memory_empty(usage, enabled)), 1
    pages = paginate(items)
    page = min(max(page, 1), len(pages))
    shown = pages[page - 1]
    text = "\n\n".join(
        [
            texts.memory_state(usage, enabled),
            texts.memory_sections(shown),
            texts.memory_page_footer(page, len(pages)),
        ]
    )
    rows = [
        (Button(texts.delete_button(item), encode(DeleteFromPage(item.id, page))),)
        for item in shown
    ]
    nav = []
    if page > 1:
        nav.append(Button(texts.PREV_BUTTON, encode(ShowPage(page - 1))))
    if page < len(pages):
        nav.append(Button(texts.NEXT_BUTTON, encode(ShowPage(page + 1))))
    if nav:
        rows.append(tuple(nav))
    return View(text, tuple(rows)), page


def clear_question(count: int) -> View:
    """Ask before forgetting everything, with Yes and Cancel buttons."""
    return View(
        texts.clear_question(count),
        (
            (
                Button(texts.clear_yes_button(count), encode(AnswerClear(True))),
                Button(texts.CLEAR_NO_BUTTON, encode(AnswerClear(False))),
            ),
        ),
    )


def visible_changes(changes: Sequence[MemoryChange]) -> list[MemoryChange]:
    """Drop a "memory full" refusal when the same content was saved later in the turn."""
    visible = []
    for index, change in enumerate(changes):
        if change.kind == "rejected_full" and any(
            later.kind == "added"
            and later.item.content.casefold() == change.rejected_content.casefold()
            for later in changes[index + 1 :]
        ):
            continue
        visible.append(change)
    return visible


def change_notices(changes: Sequence[MemoryChange]) -> list[View]:
    """Render the notices of a turn's memory changes, each undoable one with an Undo button."""
    shown = visible_changes(changes)
    views = []
    for start in range(0, len(shown), MAX_CHANGES_PER_NOTICE):
        chunk = shown[start : start + MAX_CHANGES_PER_NOTICE]
        numbered = sum(change.change_id is not None for change in chunk) > 1
        lines: list[str] = []
        buttons: list[Button] = []
        for change in chunk:
            line = texts.change_line(change)
            if change.change_id is not None:
                number = len(buttons) + 1 if numbered else None
                buttons.append(Button(texts.undo_button(number), encode(Undo(change.change_id))))
                line = f"{number}. {line}" if numbered else line
            lines.append(line)
        rows = tuple(
            tuple(buttons[i : i + UNDO_BUTTONS_PER_ROW])
            for i in range(0, len(buttons), UNDO_BUTTONS_PER_ROW)
        )
        views.append(View("\n".join(lines), rows))
    return views


def without_button(rows: Sequence[Sequence[Button]], data: str) -> tuple[tuple[Button, ...], ...]:
    """Return the button rows without the button carrying data, dropping emptied rows."""
    kept = (tuple(b for b in row if b.data != data) for row in rows)
    return tuple(row for row in kept if row)
