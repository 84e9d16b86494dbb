"""Erase everything memory keeps for an owner, for good: /delete_my_data, not /memory clear."""

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from memory.models import (
    Memory,
    MemoryBatch,
    MemoryBatchChange,
    MemoryChangeRecord,
    MemoryProposalRecord,
    MemoryVersion,
    OwnerSettings,
    StoredMemoryBlock,
)
from memory.queries import lock_owner_memories
from memory.search_index import unindex


async def count_memories(session: AsyncSession, owner_id: int) -> int:
    """Return how many memories an owner has, deleted ones too (their versions are kept)."""
    found = await session.scalar(select(func.count()).where(Memory.owner_id == owner_id))
    return found or 0


async def erase_memories(session: AsyncSession, owner_id: int) -> int:
    """Delete an owner's memories, versions, undo log, batches, index, block, switch, proposals.

    Runs in the caller's transaction, so it is all or nothing with what else the caller
    deletes; returns how many memories (deleted ones too) are gone.
    """
    await lock_owner_memories(session, owner_id)  # no change of theirs lands half-way
    ids = (await session.scalars(select(Memory.id).where(Memory.owner_id == owner_id))).all()
    # The index on SQLite has no foreign key to cascade from; its rows go first.
    await unindex(session, ids)
    mine = select(Memory.id).where(Memory.owner_id == owner_id)
    batches = select(MemoryBatch.id).where(MemoryBatch.owner_id == owner_id)
    await session.execute(
        delete(MemoryBatchChange).where(
            MemoryBatchChange.batch_id.in_(batches) | MemoryBatchChange.memory_id.in_(mine)
        )
    )
    await session.execute(delete(MemoryBatch).where(MemoryBatch.owner_id == owner_id))
    await session.execute(
        delete(MemoryChangeRecord).where(
            (MemoryChangeRecord.owner_id == owner_id) | MemoryChangeRecord.memory_id.in_(mine)
        )
    )
    await session.execute(delete(MemoryVersion).where(MemoryVersion.memory_id.in_(mine)))
    await session.execute(delete(Memory).where(Memory.owner_id == owner_id))
    await session.execute(delete(StoredMemoryBlock).where(StoredMemoryBlock.owner_id == owner_id))
    await session.execute(delete(OwnerSettings).where(OwnerSettings.owner_id == owner_id))
    await session.execute(
        delete(MemoryProposalRecord).where(MemoryProposalRecord.owner_id == owner_id)
    )
    return len(ids)
