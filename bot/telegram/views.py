"""What /memory and the change notices show, with their buttons: pure builders of views."""

from collections.abc import Sequence

from bot.telegram.callbacks import (
    AnswerClear,
    DeleteFromPage,
    PinFromPage,
    ShowPage,
    Undo,
    encode,
)
from bot.telegram.format import utf16_len
from bot.telegram.memories import texts
from bot.telegram.ui import Button, View
from memory.budget import MemoryFull
from memory.control import MemoryOverview
from memory.items import ChangeKind, MemoryChange, MemoryItem

MAX_PER_PAGE = 10
# Room for a page's memory lines; the state header and the footer fit in the rest of 4096.
MAX_PAGE_UNITS = 3600
# A category heading and the blank lines around it, charged to every line to be safe.
HEADING_UNITS = 30
MAX_CHANGES_PER_NOTICE = 8
UNDO_BUTTONS_PER_ROW = 4


def paginate(items: Sequence[MemoryItem]) -> list[list[MemoryItem]]:
    """Split memories, in order, into pages that fit one Telegram message each."""
    pages: list[list[MemoryItem]] = []
    current: list[MemoryItem] = []
    used = 0
    for item in items:
        # HTML is never shorter than the text Telegram counts, so this bound is safe.
        cost = utf16_len(texts.memory_line(item, archived=True)) + HEADING_UNITS
        if current and (len(current) == MAX_PER_PAGE or used + cost > MAX_PAGE_UNITS):
            pages.append(current)
            current, used = [], 0
        current.append(item)
        used += cost
    if current:
        pages.append(current)
    return pages


def memory_page(overview: MemoryOverview, page: int) -> View:
    """Render one page of the memory list (the last one if page is past it), with buttons."""
    if not overview.items:
        return View(texts.memory_empty(overview.usage, overview.enabled))
    pages = paginate(overview.items)
    page = min(max(page, 1), len(pages))
    shown = pages[page - 1]
    text = "\n\n".join(
        [
            texts.memory_state(overview.usage, overview.enabled),
            texts.memory_sections(shown, overview.in_block),
            texts.memory_page_footer(page, len(pages)),
        ]
    )
    rows: list[tuple[Button, ...]] = [
        (
            Button(texts.delete_button(item), encode(DeleteFromPage(item.id, page))),
            Button(texts.pin_button(item), encode(PinFromPage(item.id, page, not item.pinned))),
        )
        for item in shown
    ]
    nav = []
    if page > 1:
        nav.append(Button(texts.PREV_BUTTON, encode(ShowPage(page - 1))))
    if page < len(pages):
        nav.append(Button(texts.NEXT_BUTTON, encode(ShowPage(page + 1))))
    if nav:
        rows.append(tuple(nav))
    return View(text, tuple(rows))


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


def _saved_later(refusal: MemoryFull, later: Sequence[MemoryChange | MemoryFull]) -> bool:
    """Tell whether content the budget refused was saved later in the same turn."""
    wanted = refusal.content.casefold()
    return any(
        isinstance(change, MemoryChange)
        and change.kind is ChangeKind.ADDED
        and change.item.content.casefold() == wanted
        for change in later
    )


def visible_changes(
    changes: Sequence[MemoryChange | MemoryFull],
) -> list[MemoryChange | MemoryFull]:
    """Drop a "memory full" refusal when the same content was saved later in the turn."""
    return [
        change
        for index, change in enumerate(changes)
        if not (isinstance(change, MemoryFull) and _saved_later(change, changes[index + 1 :]))
    ]


def _undoable(change: MemoryChange | MemoryFull) -> bool:
    """Tell whether a change has an Undo button: a logged change the model made."""
    return isinstance(change, MemoryChange) and change.change_id is not None


def _notice(changes: Sequence[MemoryChange | MemoryFull]) -> View:
    """Render one notice: a line per change, numbered with its Undo button when several."""
    numbered = sum(_undoable(change) for change in changes) > 1
    lines: list[str] = []
    buttons: list[Button] = []
    for change in changes:
        line = texts.change_line(change)
        if isinstance(change, MemoryChange) and change.change_id is not None:
            number = len(buttons) + 1 if numbered else None
            buttons.append(Button(texts.undo_button(number), encode(Undo(change.change_id))))
            line = f"{number}. {line}" if numbered else line
        lines.append(line)
    rows = tuple(
        tuple(buttons[i : i + UNDO_BUTTONS_PER_ROW])
        for i in range(0, len(buttons), UNDO_BUTTONS_PER_ROW)
    )
    return View("\n".join(lines), rows)


def change_notices(changes: Sequence[MemoryChange | MemoryFull]) -> list[View]:
    """Render the notices of a turn's memory changes, each undoable one with an Undo button."""
    shown = visible_changes(changes)
    return [
        _notice(shown[start : start + MAX_CHANGES_PER_NOTICE])
        for start in range(0, len(shown), MAX_CHANGES_PER_NOTICE)
    ]


def without_button(rows: Sequence[Sequence[Button]], data: str) -> tuple[tuple[Button, ...], ...]:
    """Return the button rows without the button carrying data, dropping emptied rows."""
    kept = (tuple(b for b in row if b.data != data) for row in rows)
    return tuple(row for row in kept if row)
