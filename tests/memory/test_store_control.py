"""The store's memory-control methods on a real database: restore, clear, export, on/off, undo."""

import asyncio
from datetime import UTC, datetime

import pytest
from sqlalchemy import select, text, update

from memory.categories import Category
from memory.items import (
    AddMemory,
    AlreadyUndone,
    CannotUndo,
    ChangeNotFound,
    ForgetMemory,
    MemoryNotDeleted,
    MemoryNotFound,
    UndoRefusal,
    UpdateMemory,
)
from memory.models import Memory, MemoryChangeRecord
from memory.tools import MEMORY_TOOLS, ToolContext, run_tool

ALICE, BOB = 111, 222


async def test_restore_brings_back_a_deleted_memory_only(store):
    item = await store.add(ALICE, "The user likes green tea", Category.PREFERENCE)
    with pytest.raises(MemoryNotDeleted):
        await store.restore(ALICE, item.id)
    await store.delete(ALICE, item.id)
    with pytest.raises(MemoryNotFound):
        await store.restore(BOB, item.id)
    with pytest.raises(MemoryNotFound):
        await store.restore(ALICE, "zzzzzzzz")
    restored = await store.restore(ALICE, item.id)
    assert (restored.id, restored.content, restored.deleted_at) == (item.id, item.content, None)
    assert [m.id for m in await store.list_active(ALICE)] == [item.id]


async def test_find_sees_deleted_memories_of_the_owner_only(store):
    item = await store.add(ALICE, "The user likes green tea", Category.PREFERENCE)
    await store.delete(ALICE, item.id)
    assert (await store.find(ALICE, item.id)).deleted_at is not None
    with pytest.raises(MemoryNotFound):
        await store.find(BOB, item.id)


async def test_list_deleted_is_newest_first_and_limited(store, sessionmaker):
    items = [await store.add(ALICE, f"The user fact {n}", Category.CONTEXT) for n in range(4)]
    for item in items[:3]:
        await store.delete(ALICE, item.id)
    # Deleted a minute apart, in this order (the store reads the wall clock; set it here).
    async with sessionmaker.begin() as session:
        for minute, item in enumerate(items[:3]):
            deleted_at = datetime(2025, 1, 1, 12, minute, tzinfo=UTC)
            await session.execute(
                update(Memory).where(Memory.id == item.id).values(deleted_at=deleted_at)
            )
    listed = await store.list_deleted(ALICE, 2)
    assert [m.id for m in listed] == [items[2].id, items[1].id]
    assert await store.list_deleted(BOB, 10) == []


async def test_clear_soft_deletes_only_this_owners_active_memories(store):
    kept = await store.add(BOB, "Bob likes jazz music", Category.PREFERENCE)
    items = [await store.add(ALICE, f"The user fact {n}", Category.CONTEXT) for n in range(3)]
    await store.delete(ALICE, items[0].id)
    assert await store.clear(ALICE) == 2
    assert await store.list_active(ALICE) == []
    assert [m.id for m in await store.list_active(BOB)] == [kept.id]
    assert await store.clear(ALICE) == 0
    assert (await store.restore(ALICE, items[1].id)).content == "The user fact 1"


async def test_export_has_deleted_memories_and_every_version(store):
    first = await store.add(ALICE, "Sarah is on Platform", Category.PERSON, "Sarah", 3)
    await store.update(ALICE, first.id, "Sarah is on Design")
    second = await store.add(ALICE, "The user likes green tea", Category.PREFERENCE)
    await store.delete(ALICE, second.id)
    await store.add(BOB, "Bob likes jazz music", Category.PREFERENCE)
    records = await store.export(ALICE)
    assert [r.item.id for r in records] == [first.id, second.id]
    assert [
        (v.version_number, v.content, v.source_conversation_id) for v in records[0].versions
    ] == [
        (1, "Sarah is on Platform", 3),
        (2, "Sarah is on Design", None),
    ]
    assert records[0].item.content == "Sarah is on Design"
    assert records[1].item.deleted_at is not None
    assert await store.export(999) == []


async def test_memory_is_on_by_default_and_toggles_per_owner(switch):
    assert await switch.is_on(ALICE) is True
    assert await switch.turn(ALICE, True) is False  # already on
    assert await switch.turn(ALICE, False) is True
    assert await switch.turn(ALICE, False) is False
    assert await switch.is_on(ALICE) is False
    assert await switch.is_on(BOB) is True
    assert await switch.turn(ALICE, True) is True
    assert await switch.is_on(ALICE) is True


async def test_concurrent_first_toggles_do_not_fail(switch):
    results = await asyncio.gather(*(switch.turn(ALICE, False) for _ in range(4)))
    assert sorted(results) == [False, False, False, True]
    assert await switch.is_on(ALICE) is False


async def test_undo_of_an_add_soft_deletes_it_once(store, undo_log):
    added = await store.apply_undoable(
        ALICE, AddMemory("The user likes green tea", Category.PREFERENCE)
    )
    item, change = added.item, added.change_id
    result = await undo_log.undo(ALICE, change)
    assert (result.kind, result.before.deleted_at, result.after.id) == ("added", None, item.id)
    assert result.after.deleted_at is not None
    assert await store.list_active(ALICE) == []
    with pytest.raises(AlreadyUndone):
        await undo_log.undo(ALICE, change)


async def test_undo_of_an_update_appends_a_version_with_the_old_content(store, undo_log):
    item = await store.add(ALICE, "Sarah is on Platform", Category.PERSON, "Sarah")
    updated = await store.apply_undoable(ALICE, UpdateMemory(item.id, "Sarah is on Design"))
    change = updated.change_id
    result = await undo_log.undo(ALICE, change)
    assert (result.before.content, result.after.content) == (
        "Sarah is on Design",
        "Sarah is on Platform",
    )
    assert [(v.version_number, v.content) for v in await store.history(ALICE, item.id)] == [
        (1, "Sarah is on Platform"),
        (2, "Sarah is on Design"),
        (3, "Sarah is on Platform"),
    ]
    with pytest.raises(AlreadyUndone):
        await undo_log.undo(ALICE, change)


async def test_undo_of_a_forget_restores_it(store, undo_log):
    item = await store.add(ALICE, "Alec is the user's boss", Category.PERSON, "Alec")
    change = (await store.apply_undoable(ALICE, ForgetMemory(item.id))).change_id
    result = await undo_log.undo(ALICE, change)
    assert result.after.deleted_at is None
    assert [m.id for m in await store.list_active(ALICE)] == [item.id]


async def test_undo_refuses_when_the_memory_changed_since_and_stays_available(
    store, undo_log, sessionmaker
):
    item = await store.add(ALICE, "Sarah is on Platform", Category.PERSON, "Sarah")
    updated = await store.apply_undoable(ALICE, UpdateMemory(item.id, "Sarah is on Design"))
    change = updated.change_id
    await store.update(ALICE, item.id, "Sarah is on Marketing")
    with pytest.raises(CannotUndo) as refused:
        await undo_log.undo(ALICE, change)
    assert refused.value.reason is UndoRefusal.CHANGED
    assert (await store.find(ALICE, item.id)).content == "Sarah is on Marketing"
    async with sessionmaker() as session:
        record = await session.get(MemoryChangeRecord, change)
    assert record.undone_at is None  # a refused undo does not use the button up

    logged = await store.apply_undoable(
        ALICE, AddMemory("The user likes green tea", Category.PREFERENCE)
    )
    added, add_change = logged.item, logged.change_id
    await store.delete(ALICE, added.id)
    with pytest.raises(CannotUndo) as refused:
        await undo_log.undo(ALICE, add_change)
    assert refused.value.reason is UndoRefusal.DELETED

    gone = await store.add(ALICE, "Alec is the user's boss", Category.PERSON, "Alec")
    forget_change = (await store.apply_undoable(ALICE, ForgetMemory(gone.id))).change_id
    await store.restore(ALICE, gone.id)
    with pytest.raises(CannotUndo) as refused:
        await undo_log.undo(ALICE, forget_change)
    assert refused.value.reason is UndoRefusal.RESTORED


async def test_undo_of_another_owners_or_an_unknown_change_is_not_found(store, undo_log):
    added = await store.apply_undoable(
        ALICE, AddMemory("The user likes green tea", Category.PREFERENCE)
    )
    item, change = added.item, added.change_id
    for owner, change_id in ((BOB, change), (ALICE, change + 1000)):
        with pytest.raises(ChangeNotFound):
            await undo_log.undo(owner, change_id)
    assert [m.id for m in await store.list_active(ALICE)] == [item.id]


async def test_concurrent_undos_undo_once(store, undo_log, sessionmaker):
    item = await store.add(ALICE, "Sarah is on Platform", Category.PERSON, "Sarah")
    updated = await store.apply_undoable(ALICE, UpdateMemory(item.id, "Sarah is on Design"))
    change = updated.change_id
    results = await asyncio.gather(
        *(undo_log.undo(ALICE, change) for _ in range(3)), return_exceptions=True
    )
    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(
        isinstance(r, AlreadyUndone | CannotUndo) for r in results if isinstance(r, Exception)
    )
    history = await store.history(ALICE, item.id)
    assert [v.content for v in history] == [
        "Sarah is on Platform",
        "Sarah is on Design",
        "Sarah is on Platform",
    ]
    async with sessionmaker() as session:
        records = (await session.scalars(select(MemoryChangeRecord))).all()
    assert [r.undone_at is not None for r in records] == [True]


JOURNAL_DOWN = {
    "sqlite": [
        "CREATE TRIGGER journal_down BEFORE INSERT ON agent_memory_changes "
        "BEGIN SELECT RAISE(ABORT, 'journal down'); END"
    ],
    "postgresql": [
        "CREATE FUNCTION journal_down() RETURNS trigger LANGUAGE plpgsql "
        "AS $$ BEGIN RAISE EXCEPTION 'journal down'; END $$",
        "CREATE TRIGGER journal_down BEFORE INSERT ON agent_memory_changes "
        "FOR EACH ROW EXECUTE FUNCTION journal_down()",
    ],
}
JOURNAL_UP = {
    "sqlite": ["DROP TRIGGER journal_down"],
    "postgresql": [
        "DROP TRIGGER journal_down ON agent_memory_changes",
        "DROP FUNCTION journal_down()",
    ],
}


async def run_sql(engine, statements: list[str]) -> None:
    async with engine.begin() as connection:
        for statement in statements:
            await connection.execute(text(statement))


async def test_a_change_and_its_undo_entry_commit_together(engine, store, switch):
    item = await store.add(ALICE, "Sarah is on Platform", Category.PERSON, "Sarah")
    dialect = engine.dialect.name
    await run_sql(engine, JOURNAL_DOWN[dialect])
    try:
        ctx = ToolContext(store, switch, ALICE)
        calls = [
            (
                "add_to_memory",
                {"content": "The user likes green tea", "category": "preference", "subject": "tea"},
            ),
            ("update_memory", {"memory_id": item.id, "content": "Sarah is on Design"}),
            ("forget_memory", {"memory_id": item.id}),
        ]
        for name, arguments in calls:
            outcome = await run_tool(ctx, name, arguments, MEMORY_TOOLS)
            assert outcome.is_error and "nothing was changed" in outcome.content
    finally:
        await run_sql(engine, JOURNAL_UP[dialect])
    # Every write rolled back with its undo entry: no change without an Undo.
    assert [(m.id, m.version, m.content) for m in await store.list_active(ALICE)] == [
        (item.id, 1, "Sarah is on Platform")
    ]


async def test_undo_of_a_save_refuses_when_the_memory_was_updated_since(store, undo_log):
    saved = await store.apply_undoable(
        ALICE, AddMemory("Sarah is on Platform", Category.PERSON, "Sarah")
    )
    await store.update(ALICE, saved.item.id, "Sarah is on Design")
    with pytest.raises(CannotUndo) as refused:
        await undo_log.undo(ALICE, saved.change_id)
    assert refused.value.reason is UndoRefusal.CHANGED
    assert (await store.find(ALICE, saved.item.id)).content == "Sarah is on Design"
