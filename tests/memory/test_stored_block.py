"""The stored memory block always matches the memories: every kind of change drops it."""

import asyncio

import pytest
from sqlalchemy import func, select

from memory.block import render_memory_block
from memory.categories import Category
from memory.items import UpdateMemory
from memory.models import StoredMemoryBlock
from memory.stored_block import owner_block

ALICE, BOB = 1, 2


async def block_of(sessionmaker, owner_id: int) -> str:
    """Return the owner's block through the stored one, committing what it stores."""
    async with sessionmaker.begin() as session:
        return (await owner_block(session, owner_id, 2000)).text


async def stored_blocks(sessionmaker) -> int:
    async with sessionmaker() as session:
        return await session.scalar(select(func.count()).select_from(StoredMemoryBlock))


async def test_the_block_is_stored_and_read_back(sessionmaker, store):
    await store.add(ALICE, "The user likes green tea", Category.PREFERENCE)
    first = await block_of(sessionmaker, ALICE)
    assert "green tea" in first and await stored_blocks(sessionmaker) == 1
    assert await block_of(sessionmaker, ALICE) == first
    assert await stored_blocks(sessionmaker) == 1


async def change_alice(store, undo_log, kind: str, logged_change: int) -> None:
    """Make one kind of change to ALICE's memories, on a memory created beforehand."""
    memories = {m.subject: m for m in await store.list_active(ALICE)}
    tea = memories["tea"]
    if kind == "add":
        await store.add(ALICE, "The user's sister is Jo", Category.PERSON, "Jo")
    elif kind == "update":
        await store.update(ALICE, tea.id, "The user now prefers black tea")
    elif kind == "delete":
        await store.delete(ALICE, tea.id)
    elif kind == "restore":
        [gone] = await store.list_deleted(ALICE, 1)
        await store.restore(ALICE, gone.id)
    elif kind == "clear":
        await store.clear(ALICE)
    elif kind == "undo":
        await undo_log.undo(ALICE, logged_change)


@pytest.mark.parametrize("kind", ["add", "update", "delete", "restore", "clear", "undo"])
async def test_every_change_renders_the_block_afresh(sessionmaker, store, undo_log, kind):
    tea = await store.add(ALICE, "The user likes green tea", Category.PREFERENCE, "tea")
    update = UpdateMemory(tea.id, "The user likes green tea a lot")
    logged = await store.apply_undoable(ALICE, update)
    gone = await store.add(ALICE, "The user lives in Porto", Category.CONTEXT, "home")
    await store.delete(ALICE, gone.id)
    await store.add(BOB, "Bob's memory stays put", Category.CONTEXT)
    bob_before = await block_of(sessionmaker, BOB)
    before = await block_of(sessionmaker, ALICE)

    await change_alice(store, undo_log, kind, logged.change_id)

    after = await block_of(sessionmaker, ALICE)
    assert after == render_memory_block(await store.list_active(ALICE))
    assert after != before
    # Another owner's stored block is untouched.
    assert await stored_blocks(sessionmaker) == 2
    assert await block_of(sessionmaker, BOB) == bob_before


async def test_a_failed_change_keeps_the_block(sessionmaker, store):
    await store.add(ALICE, "The user likes green tea", Category.PREFERENCE)
    stored = await block_of(sessionmaker, ALICE)
    with pytest.raises(LookupError):
        await store.delete(ALICE, "nosuchid")
    assert await stored_blocks(sessionmaker) == 1
    assert await block_of(sessionmaker, ALICE) == stored


async def test_a_change_made_while_a_block_is_rendered_is_not_lost(sessionmaker, store):
    await store.add(ALICE, "The user likes green tea", Category.PREFERENCE)
    async with sessionmaker.begin() as rendering:
        await owner_block(rendering, ALICE, 2000)  # rendered and stored, not yet committed
        change = asyncio.create_task(store.add(ALICE, "The user's sister is Jo", Category.PERSON))
        await asyncio.sleep(0.3)  # the change gets as far as it can meanwhile
    await change
    block = await block_of(sessionmaker, ALICE)
    assert "sister is Jo" in block
    assert block == render_memory_block(await store.list_active(ALICE))


async def test_the_stored_block_names_its_memories_in_its_order(sessionmaker, store):
    # Listed by category (context, person, preference), not in the order they were saved.
    sarah = await store.add(ALICE, "Sarah is on the Platform team", Category.PERSON, "Sarah")
    tea = await store.add(ALICE, "The user likes green tea", Category.PREFERENCE)
    porto = await store.add(ALICE, "The user lives in Porto", Category.CONTEXT)
    async with sessionmaker.begin() as session:
        block = await owner_block(session, ALICE, 2000)
    assert block.memory_ids == (porto.id, sarah.id, tea.id)
    async with sessionmaker() as session:
        row = await session.get(StoredMemoryBlock, ALICE)
    assert row is not None and row.memory_ids == [porto.id, sarah.id, tea.id]
    # The ids come from the stored row, not from the text: read back, they are the same.
    async with sessionmaker.begin() as session:
        assert await owner_block(session, ALICE, 2000) == block
