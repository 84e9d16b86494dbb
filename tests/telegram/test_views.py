"""Pure rendering of memory pages, change notices and button data."""

from datetime import UTC, datetime, timedelta

import pytest

from bot.telegram.callbacks import (
    AnswerClear,
    DeleteFromPage,
    PinFromPage,
    ShowPage,
    Undo,
    encode,
    parse_callback,
)
from bot.telegram.ui import MAX_CALLBACK_BYTES, Button
from bot.telegram.views import (
    change_notices,
    clear_question,
    memory_page,
    paginate,
    without_button,
)
from memory.budget import BlockUsage, MemoryFull
from memory.categories import Category
from memory.control import MemoryOverview
from memory.items import ChangeKind, MemoryChange, MemoryItem
from tests.fakes.telegram_server import MAX_MESSAGE_LENGTH, format_text, utf16_len

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def overview(items, *, enabled=True, in_block=None, usage=None) -> MemoryOverview:
    """Return what /memory shows for these memories: by default all in the block."""
    in_block = frozenset(i.id for i in items) if in_block is None else frozenset(in_block)
    usage = usage or BlockUsage(len(items), len(in_block), 10 * len(in_block), 2000)
    return MemoryOverview(list(items), usage, in_block, enabled)


def item(n: int, content: str | None = None, subject: str | None = None, **kw) -> MemoryItem:
    return MemoryItem(
        id=f"m{n:07d}",
        owner_id=1,
        category=kw.get("category", Category.CONTEXT),
        subject=subject,
        content=content or f"The user fact number {n}",
        version=kw.get("version", 1),
        created_at=T0 + timedelta(minutes=n),
        updated_at=T0 + timedelta(minutes=n),
        pinned=kw.get("pinned", False),
    )


def telegram_length(html: str) -> int:
    """Return the length Telegram would count, after checking the HTML is accepted."""
    text, _ = format_text(html, "HTML")
    return utf16_len(text)


@pytest.mark.parametrize(
    "action",
    [
        ShowPage(1),
        ShowPage(999_999),
        DeleteFromPage("aZ09aZ09", 999_999),
        PinFromPage("aZ09aZ09", 999_999, True),
        PinFromPage("aZ09aZ09", 1, False),
        AnswerClear(True),
        AnswerClear(False),
        Undo(1),
        Undo(10**18 - 1),
    ],
)
def test_callback_data_round_trips_under_64_bytes(action):
    data = encode(action)
    assert len(data.encode()) <= MAX_CALLBACK_BYTES
    assert parse_callback(data) == action


@pytest.mark.parametrize(
    "data",
    [
        None,
        "",
        "m:p:0",
        "m:p:-1",
        "m:p:x",
        "m:d:short:1",
        "m:d:aZ09aZ09:0",
        "m:d:aZ09aZ09",
        "m:c:maybe",
        "u:0",
        "u:abc",
        "u:1:2",
        "forget:1",
        "m:p:1\n",
    ],
)
def test_malformed_callback_data_is_not_an_action(data):
    assert parse_callback(data) is None


def test_pages_hold_ten_memories_and_number_the_buttons():
    items = [item(n) for n in range(23)]
    assert [len(page) for page in paginate(items)] == [10, 10, 3]
    view = memory_page(overview(items), 2)
    assert "Page 2 of 3" in view.text
    deletes = [b for row in view.buttons for b in row if b.data.startswith("m:d:")]
    assert [b.data for b in deletes] == [f"m:d:{i.id}:2" for i in items[10:20]]
    assert [b.data for b in view.buttons[-1]] == ["m:p:1", "m:p:3"]
    first = memory_page(overview(items), 1)
    assert [b.data for b in first.buttons[-1]] == ["m:p:2"]  # no Prev on the first page


def test_a_page_past_the_end_shows_the_last_page():
    items = [item(n) for n in range(12)]
    view = memory_page(overview(items), 7)
    assert "Page 2 of 2" in view.text and items[11].id in view.text and items[0].id not in view.text


def test_one_page_has_no_paging_buttons():
    items = [item(n) for n in range(3)]
    view = memory_page(overview(items), 1)
    assert [[b.data[:4] for b in row] for row in view.buttons] == [["m:d:", "m:+:"]] * 3
    assert "Page" not in view.text


def test_the_longest_memories_still_fit_one_message_per_page():
    # Worst cases for length: markup-heavy text that escaping inflates, and astral characters.
    items = [
        item(n, content=("&<>" * 200)[:500], subject="&" * 200, category=Category.PERSON)
        for n in range(12)
    ] + [item(100 + n, content="👍" * 500, subject="🦄" * 200) for n in range(12)]
    usage = BlockUsage(count=99_999, in_block=9_999, tokens=99_999, budget=100_000)
    pages = paginate(items)
    assert sum(len(p) for p in pages) == 24
    for number in range(1, len(pages) + 1):
        view = memory_page(overview(items, enabled=False, in_block=(), usage=usage), number)
        assert telegram_length(view.text) <= MAX_MESSAGE_LENGTH
        assert all(len(b.data.encode()) <= MAX_CALLBACK_BYTES for row in view.buttons for b in row)


def test_page_escapes_content_and_shows_state_and_budget():
    items = [item(1, content="Likes <b>tea</b> & cake", subject="A&B")]
    usage = BlockUsage(count=1, in_block=1, tokens=120, budget=2000)
    view = memory_page(overview(items, enabled=False, usage=usage), 1)
    text, _ = format_text(view.text, "HTML")
    assert "1 memory, all in the prompt (120 of 2,000 tokens)" in text
    assert "Memory is off" in text
    assert f"[{items[0].id}] Likes <b>tea</b> & cake (A&B)" in text
    [[delete, pin]] = view.buttons
    assert (delete.label, pin.label, pin.data) == ("Delete: A&B", "📌 Pin", f"m:+:{items[0].id}:1")


def test_archived_memories_are_marked_and_pinned_ones_offer_unpin():
    items = [item(1), item(2, pinned=True)]
    usage = BlockUsage(count=2, in_block=1, tokens=300, budget=2000)
    view = memory_page(overview(items, in_block={items[1].id}, usage=usage), 1)
    text, _ = format_text(view.text, "HTML")
    assert "2 memories, 1 in the prompt (300 of 2,000 tokens), the rest archived" in text
    assert f"[{items[0].id}] The user fact number 1 · archived" in text
    assert f"📌 [{items[1].id}] The user fact number 2\n" in text + "\n"
    assert [b.data for b in view.buttons[1]] == [f"m:d:{items[1].id}:1", f"m:-:{items[1].id}:1"]


def test_empty_memory_page_has_no_buttons():
    view = memory_page(overview([]), 3)
    assert view.buttons == ()
    assert "don't remember anything" in view.text and "Memory is on" in view.text


def test_clear_question_buttons():
    view = clear_question(3)
    assert [(b.label, b.data) for b in view.buttons[0]] == [
        ("Yes, forget 3 memories", "m:c:y"),
        ("Cancel", "m:c:n"),
    ]


def test_notice_of_one_change_has_one_undo_button():
    [view] = change_notices(
        [MemoryChange(ChangeKind.ADDED, item(1, "The user likes tea"), change_id=5)]
    )
    assert view.text == "Saved to memory: 'The user likes tea'"
    assert view.buttons == ((Button("Undo", "u:5"),),)


def test_notice_numbers_several_changes_and_their_buttons():
    old, new = item(2, "Sarah is on Platform"), item(2, "Sarah is on Design", version=2)
    changes = [
        MemoryChange(ChangeKind.ADDED, item(1, "The user likes tea"), change_id=7),
        MemoryChange(ChangeKind.UPDATED, new, previous=old, change_id=8),
        MemoryFull("A long fact", 10_000, 10_000),
        MemoryChange(ChangeKind.FORGOTTEN, item(3, "Alec is the boss"), change_id=9),
    ]
    [view] = change_notices(changes)
    text, _ = format_text(view.text, "HTML")
    assert text.splitlines() == [
        "1. Saved to memory: 'The user likes tea'",
        "2. Updated memory: 'Sarah is on Platform' → 'Sarah is on Design'",
        "I keep at most 10,000 memories and have 10,000, so I couldn't save: "
        "'A long fact'. Delete some with /memory.",
        "3. Forgot: 'Alec is the boss'",
    ]
    assert [(b.label, b.data) for row in view.buttons for b in row] == [
        ("Undo 1", "u:7"),
        ("Undo 2", "u:8"),
        ("Undo 3", "u:9"),
    ]


def test_a_refusal_followed_by_a_successful_add_of_the_same_fact_is_not_shown():
    changes = [
        MemoryFull("The user likes tea", 10_000, 10_000),
        MemoryChange(ChangeKind.UPDATED, item(2, "Merged"), previous=item(2, "Two"), change_id=1),
        MemoryChange(ChangeKind.ADDED, item(1, "The user likes tea"), change_id=2),
    ]
    [view] = change_notices(changes)
    assert "full" not in view.text and len(view.text.splitlines()) == 2


def test_many_changes_are_split_into_notices_that_fit():
    long = "x" * 500
    changes = [
        MemoryChange(ChangeKind.UPDATED, item(n, long), previous=item(n, long), change_id=n + 1)
        for n in range(20)
    ]
    views = change_notices(changes)
    assert len(views) == 3
    assert sum(len(v.text.splitlines()) for v in views) == 20
    assert all(telegram_length(v.text) <= MAX_MESSAGE_LENGTH for v in views)
    undo_data = [b.data for v in views for row in v.buttons for b in row]
    assert undo_data == [f"u:{n + 1}" for n in range(20)]


def test_no_changes_no_notice():
    assert change_notices([]) == []


def test_without_button_drops_the_button_and_empty_rows():
    rows = ((Button("Undo 1", "u:1"), Button("Undo 2", "u:2")), (Button("Undo 3", "u:3"),))
    assert without_button(rows, "u:3") == ((Button("Undo 1", "u:1"), Button("Undo 2", "u:2")),)
    assert without_button(rows, "u:1") == ((Button("Undo 2", "u:2"),), (Button("Undo 3", "u:3"),))
    assert without_button(((Button("Undo", "u:1"),),), "u:1") == ()
