"""Move everything an owner has to a new id: a Telegram group upgraded to a supergroup."""

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from memory.db import affected
from memory.models import Memory, MemoryChangeRecord, OwnerSettings, StoredMemoryBlock
from memory.queries import load_active_memories, lock_owner_memories
from memory.search_index import index_items


async def move_owner(session: AsyncSession, old_id: int, new_id: int) -> int:
    """Give the new id the old one's memories, undo log and switch; return memories moved.

    Runs in the caller's transaction; a second run finds nothing left to move.
    """
    for owner in sorted((old_id, new_id)):  # one order, so two movers cannot deadlock
        await lock_owner_memories(session, owner)
    moved = await session.execute(
        update(Memory).where(Memory.owner_id == old_id).values(owner_id=new_id)
    )
    await session.execute(
        update(MemoryChangeRecord)
        .where(MemoryChangeRecord.owner_id == old_id)
        .values(owner_id=new_id)
    )
    await _move_switch(session, old_id, new_id)
    await session.execute(
        delete(StoredMemoryBlock).where(StoredMemoryBlock.owner_id.in_((old_id, new_id)))
    )
    # The index marks rows with their owner: the moved ones carry the new id's mark now.
    await index_items(session, await load_active_memories(session, new_id))
    return affected(moved)


async def _move_switch(session: AsyncSession, old_id: int, new_id: int) -> None:
    """Carry the old id's memory switch over, unless the new id has set its own."""
    new_has_one = await session.scalar(
        select(OwnerSettings.owner_id).where(OwnerSettings.owner_id == new_id)
    )
    if new_has_one is None:
        await session.execute(
            update(OwnerSettings).where(OwnerSettings.owner_id == old_id).values(owner_id=new_id)
        )
    else:
        await session.execute(delete(OwnerSettings).where(OwnerSettings.owner_id == old_id))
