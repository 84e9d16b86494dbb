"""An owner's applied batches, newest first, each with what it did to which memory."""

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memory.batches.values import BatchKind, BatchState
from memory.models import MemoryBatch, MemoryBatchChange

MAX_BATCHES_LISTED = 50
MAX_LINES_LISTED = 200


class LineEffect(StrEnum):
    """What a batch did to one memory."""

    ADDED = "added"
    ARCHIVED = "archived"
    RESTORED = "restored"
    CHANGED = "changed"


@dataclass(frozen=True)
class BatchLineDone:
    """One memory a batch changed, and why."""

    memory_id: str
    effect: LineEffect
    reason: str | None


@dataclass(frozen=True)
class BatchSummary:
    """An applied batch: where it came from, whether it was undone, and its lines."""

    id: int
    kind: BatchKind
    created_at: datetime
    undone: bool
    reverts_id: int | None
    lines: list[BatchLineDone]


def _effect(change: MemoryBatchChange) -> LineEffect:
    """Name what a batch's change did to its memory."""
    if change.before_version is None:
        return LineEffect.ADDED
    if change.after_deleted and not change.before_deleted:
        return LineEffect.ARCHIVED
    if change.before_deleted and not change.after_deleted:
        return LineEffect.RESTORED
    return LineEffect.CHANGED


async def _lines(session: AsyncSession, batch_ids: list[int]) -> dict[int, list[BatchLineDone]]:
    """Return each batch's lines, at most MAX_LINES_LISTED a batch."""
    query = (
        select(MemoryBatchChange)
        .where(MemoryBatchChange.batch_id.in_(batch_ids))
        .order_by(MemoryBatchChange.batch_id, MemoryBatchChange.id)
    )
    lines: dict[int, list[BatchLineDone]] = {batch_id: [] for batch_id in batch_ids}
    for change in await session.scalars(query):
        kept = lines[change.batch_id]
        if len(kept) < MAX_LINES_LISTED:
            kept.append(BatchLineDone(change.memory_id, _effect(change), change.reason))
    return lines


async def applied_batches(
    sessionmaker: async_sessionmaker[AsyncSession], owner_id: int, limit: int = MAX_BATCHES_LISTED
) -> list[BatchSummary]:
    """Return the owner's applied batches, newest first, with their lines."""
    query = (
        select(MemoryBatch)
        .where(MemoryBatch.owner_id == owner_id, MemoryBatch.state == BatchState.APPLIED.value)
        .order_by(MemoryBatch.created_at.desc(), MemoryBatch.id.desc())
        .limit(min(limit, MAX_BATCHES_LISTED))
    )
    async with sessionmaker() as session:
        batches = list(await session.scalars(query))
        lines = await _lines(session, [batch.id for batch in batches])
    return [
        BatchSummary(
            id=batch.id,
            kind=BatchKind(batch.kind),
            created_at=batch.created_at,
            undone=batch.undone_at is not None,
            reverts_id=batch.reverts_id,
            lines=lines[batch.id],
        )
        for batch in batches
    ]
