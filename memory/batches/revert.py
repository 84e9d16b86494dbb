"""Undo all of a batch: each memory it changed goes back, unless the user changed it since."""

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from memory.batches.apply import Step, record_steps
from memory.batches.values import BatchKind, BatchState, BatchTooBig, Reverted
from memory.items import MemoryAtLimit, MemoryItem
from memory.models import Memory, MemoryBatch, MemoryBatchChange, MemoryVersion, utcnow
from memory.queries import item_of, load_with_current, lock_memory
from memory.search_index import index_items, unindex
from memory.writes import bring_back, new_version


async def _content_at(session: AsyncSession, memory_id: str, number: int) -> str:
    """Return the content of one version of a memory."""
    content = await session.scalar(
        select(MemoryVersion.content).where(
            MemoryVersion.memory_id == memory_id, MemoryVersion.version_number == number
        )
    )
    if content is None:
        # Versions are append-only: a version a batch saw is always there.
        raise LookupError(f"memory {memory_id} has no version {number}")
    return content


async def _restore(
    session: AsyncSession, memory: Memory, current: MemoryVersion, change: MemoryBatchChange
) -> tuple[MemoryVersion, bool]:
    """Give a memory its content from before the batch; return its version and if it is gone."""
    if change.before_version is None:
        return current, True
    content = await _content_at(session, memory.id, change.before_version)
    if content == current.content:
        return current, change.before_deleted
    restored = new_version(memory, current.version_number + 1, content, None)
    session.add(restored)
    await session.flush()
    return restored, change.before_deleted


async def _revert_one(
    session: AsyncSession, owner_id: int, change: MemoryBatchChange, limit: int
) -> Step | MemoryItem:
    """Put one memory back as it was before the batch; return the step, or it if it changed."""
    await lock_memory(session, owner_id, change.memory_id)
    memory, current = await load_with_current(session, owner_id, change.memory_id)
    deleted = memory.deleted_at is not None
    if current.version_number != change.after_version or deleted != change.after_deleted:
        return item_of(memory, current)
    version, gone = await _restore(session, memory, current, change)
    if gone and not deleted:
        memory.deleted_at = utcnow()
        await unindex(session, [memory.id])
    elif deleted and not gone:
        try:
            await bring_back(session, memory, version, limit)
        except MemoryAtLimit:
            raise BatchTooBig(limit) from None
    elif not gone and version is not current:
        await index_items(session, [item_of(memory, version)])
    return Step(memory.id, current.version_number, deleted, version.version_number, gone)


async def revert_batch(session: AsyncSession, owner_id: int, batch_id: int, limit: int) -> Reverted:
    """Undo every change of a batch as a new batch of its own; list what changed since."""
    changes = (
        await session.scalars(
            select(MemoryBatchChange)
            .where(MemoryBatchChange.batch_id == batch_id)
            .order_by(MemoryBatchChange.id.desc())
        )
    ).all()
    revert = MemoryBatch(
        owner_id=owner_id,
        kind=BatchKind.REVERT.value,
        state=BatchState.APPLIED.value,
        plan=[],
        reverts_id=batch_id,
        created_at=utcnow(),
    )
    session.add(revert)
    await session.flush()
    left_alone: list[MemoryItem] = []
    steps: list[Step] = []
    for change in changes:
        outcome = await _revert_one(session, owner_id, change, limit)
        if isinstance(outcome, Step):
            steps.append(outcome)
        else:
            left_alone.append(outcome)
    session.add_all(record_steps(revert.id, steps, None))
    return Reverted(revert.id, len(steps), left_alone)
