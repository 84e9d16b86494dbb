"""The memory store on a real SQLite file: versions, soft delete, owner scoping."""

from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from memory.block import block_order
from memory.categories import Category
from memory.ids import is_memory_id
from memory.items import MemoryNotFound, find_by_subject
from memory.models import Memory, MemoryVersion

ALICE, BOB = 111, 222


async def test_add_stores_memory_and_first_version(store, sessionmaker):
    item = await store.add(ALICE, "Alec is the user's boss", Category.PERSON, "Alec", 7)
    assert is_memory_id(item.id)
    assert (item.version, item.subject, item.category) == (1, "Alec", Category.PERSON)
    async with sessionmaker() as session:
        versions = (await session.scalars(select(MemoryVersion))).all()
    assert [(v.memory_id, v.version_number, v.source_conversation_id) for v in versions] == [
        (item.id, 1, 7)
    ]


async def test_update_appends_a_version_and_keeps_the_id(store):
    item = await store.add(ALICE, "Sarah is on the Platform team", Category.PERSON, "Sarah")
    before, after = await store.update(ALICE, item.id, "Sarah is on the Design team")
    assert (before.content, before.version) == ("Sarah is on the Platform team", 1)
    assert (after.id, after.content, after.version) == (item.id, "Sarah is on the Design team", 2)
    history = await store.history(ALICE, item.id)
    assert [(v.version_number, v.content) for v in history] == [
        (1, "Sarah is on the Platform team"),
        (2, "Sarah is on the Design team"),
    ]
    assert [m.content for m in await store.list_active(ALICE)] == ["Sarah is on the Design team"]


async def test_versions_are_unique_per_memory(store, sessionmaker):
    item = await store.add(ALICE, "The user likes tea", Category.PREFERENCE)
    with pytest.raises(IntegrityError):
        async with sessionmaker.begin() as session:
            session.add(MemoryVersion(memory_id=item.id, version_number=1, content="again!"))


async def test_soft_delete_hides_but_keeps_rows(store, sessionmaker):
    item = await store.add(ALICE, "The user likes tea", Category.PREFERENCE)
    deleted = await store.delete(ALICE, item.id)
    assert deleted.content == "The user likes tea"
    assert await store.list_active(ALICE) == []
    with pytest.raises(MemoryNotFound):
        await store.delete(ALICE, item.id)
    with pytest.raises(MemoryNotFound):
        await store.update(ALICE, item.id, "The user likes coffee")
    async with sessionmaker() as session:
        row = await session.get(Memory, item.id)
    assert row.deleted_at is not None


async def test_other_owners_ids_are_not_found(store):
    item = await store.add(ALICE, "Alice's secret project is Falcon", Category.PROJECT)
    await store.add(BOB, "Bob likes jazz music", Category.PREFERENCE)
    for call in (
        store.find(BOB, item.id),
        store.delete(BOB, item.id),
        store.update(BOB, item.id, "Hijacked content"),
        store.history(BOB, item.id),
    ):
        with pytest.raises(MemoryNotFound):
            await call
    assert [m.content for m in await store.list_active(BOB)] == ["Bob likes jazz music"]
    assert (await store.find(ALICE, item.id)).content == "Alice's secret project is Falcon"
    assert find_by_subject(await store.list_active(BOB), "Falcon") is None


async def test_list_active_is_in_block_order(store):
    added = [
        await store.add(ALICE, "Works on the Falcon launch", Category.PROJECT),
        await store.add(ALICE, "Alec is the user's boss", Category.PERSON, "Alec"),
        await store.add(ALICE, "User works on the Platform team", Category.CONTEXT),
        await store.add(ALICE, "Prefers Friday due dates", Category.PREFERENCE),
        await store.add(ALICE, "Sarah is a designer", Category.PERSON, "Sarah"),
    ]
    listed = await store.list_active(ALICE)
    assert [m.category.value for m in listed] == [
        "context",
        "person",
        "person",
        "preference",
        "project",
    ]
    assert [m.id for m in listed if m.category == Category.PERSON] == [added[1].id, added[4].id]
    # The SQL display order and the Python one the block renders with are the same rule.
    assert listed == sorted(listed, key=block_order)


async def test_find_by_subject_ignores_case_and_spacing(store):
    item = await store.add(ALICE, "Alec is the user's boss", Category.PERSON, "Alec  Smith")
    emile = await store.add(ALICE, "Émile is the user's cousin", Category.PERSON, "Émile")
    street = await store.add(ALICE, "The user lives on Hauptstraße", Category.CONTEXT, "Straße")
    active = await store.list_active(ALICE)
    assert find_by_subject(active, "alec smith").id == item.id
    assert find_by_subject(active, "Alec") is None
    # Case folding beyond ASCII, which SQL lower() does not do on SQLite.
    assert find_by_subject(active, "ÉMILE").id == emile.id
    assert find_by_subject(active, "STRASSE").id == street.id


async def test_a_failed_add_writes_nothing(store, sessionmaker):
    # The content check fails on the version insert; the memory row must roll back with it.
    with pytest.raises(IntegrityError):
        await store.add(ALICE, "abc", Category.CONTEXT)
    async with sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(Memory)) == 0


async def test_every_read_keeps_creation_change_and_deletion_times_apart(store, sessionmaker):
    # Three different instants: a read that took one datetime column for another would show.
    created, changed, deleted = (datetime(2024, month, 1, tzinfo=UTC) for month in (1, 2, 3))
    kept = await store.add(ALICE, "Sarah is on the Platform team", Category.PERSON, "Sarah")
    await store.update(ALICE, kept.id, "Sarah is on the Design team")
    gone = await store.add(ALICE, "The user likes green tea", Category.PREFERENCE)
    await store.delete(ALICE, gone.id)
    async with sessionmaker.begin() as session:
        await session.execute(update(Memory).values(created_at=created))
        await session.execute(update(Memory).where(Memory.id == gone.id).values(deleted_at=deleted))
        await session.execute(update(MemoryVersion).values(created_at=changed))
        await session.execute(
            update(MemoryVersion)
            .where(MemoryVersion.memory_id == kept.id, MemoryVersion.version_number == 1)
            .values(created_at=created)
        )
    active = [
        *await store.list_active(ALICE),
        await store.find(ALICE, kept.id),
        await store.find_subject(ALICE, "sarah"),
        *await store.search(ALICE, "design", 10),
    ]
    records = await store.export(ALICE)
    active.append(next(r.item for r in records if r.item.id == kept.id))
    for item in active:
        assert (item.created_at, item.updated_at, item.deleted_at) == (created, changed, None)
    deleted_items = [
        *await store.list_deleted(ALICE, 10),
        await store.find(ALICE, gone.id),
        next(r.item for r in records if r.item.id == gone.id),
    ]
    for item in deleted_items:
        assert (item.created_at, item.updated_at, item.deleted_at) == (created, changed, deleted)
    assert [v.created_at for v in await store.history(ALICE, kept.id)] == [created, changed]


async def test_a_failed_update_is_not_retried_as_a_lost_race(store):
    # The content check fails on the new version's insert, whose key nobody else holds.
    item = await store.add(ALICE, "The user likes tea", Category.PREFERENCE)
    with pytest.raises(IntegrityError):
        await store.update(ALICE, item.id, "abc")
    assert [v.content for v in await store.history(ALICE, item.id)] == ["The user likes tea"]
