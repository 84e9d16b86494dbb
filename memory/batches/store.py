"""Batches of memory changes: proposed as one plan, applied in one transaction, undone whole."""

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memory.batches.apply import apply_line, record_steps
from memory.batches.listing import BatchSummary, applied_batches
from memory.batches.revert import revert_batch
from memory.batches.values import (
    Batch,
    BatchDecided,
    BatchKind,
    BatchNote,
    BatchNotFound,
    BatchState,
    BatchTooBig,
    Reverted,
    digest_of,
)
from memory.budget import DEFAULT_MEMORY_LIMIT
from memory.db import affected
from memory.models import Memory, MemoryBatch, MemoryBatchChange, utcnow
from memory.plan_lines import BatchLine, ImportLine, read_lines, stored_lines
from memory.queries import count_active, load_active_memories
from memory.stored_block import memory_change


def _value(batch: MemoryBatch) -> Batch:
    """Copy a batch row into a plain value."""
    return Batch(
        id=batch.id,
        owner_id=batch.owner_id,
        kind=BatchKind(batch.kind),
        state=BatchState(batch.state),
        lines=read_lines(batch.plan),
        undone=batch.undone_at is not None,
        reverts_id=batch.reverts_id,
    )


class BatchStore:
    """Each owner's batches; every read and write is scoped by owner."""

    def __init__(
        self, sessionmaker: async_sessionmaker[AsyncSession], limit: int = DEFAULT_MEMORY_LIMIT
    ):
        self._sessionmaker = sessionmaker
        self._limit = limit

    async def record(
        self,
        owner_id: int,
        kind: BatchKind,
        state: BatchState,
        lines: Sequence[BatchLine],
        *,
        digest: str | None = None,
        tokens: int = 0,
        automatic: bool = False,
        at: datetime | None = None,
    ) -> int:
        """Store a pass or an import's plan (or why there is none); return its id."""
        batch = MemoryBatch(
            owner_id=owner_id,
            kind=kind.value,
            state=state.value,
            # Read first: what is stored is a valid line, in the one shape lines are kept in.
            plan=stored_lines(read_lines(lines)),
            digest=digest,
            tokens=tokens,
            automatic=automatic,
            created_at=at or utcnow(),
        )
        async with self._sessionmaker.begin() as session:
            session.add(batch)
            await session.flush()
            return batch.id

    async def last_digest(self, owner_id: int) -> str | None:
        """Return the fingerprint of the memories the owner's last tidy pass saw or left."""
        query = (
            select(MemoryBatch.digest)
            .where(MemoryBatch.owner_id == owner_id, MemoryBatch.kind == BatchKind.TIDY.value)
            .order_by(MemoryBatch.created_at.desc(), MemoryBatch.id.desc())
            .limit(1)
        )
        async with self._sessionmaker() as session:
            return await session.scalar(query)

    async def automatic_since(self, owner_id: int, since: datetime) -> bool:
        """Tell whether an automatic pass ran for the owner at or after since."""
        query = select(func.count()).where(
            MemoryBatch.owner_id == owner_id,
            MemoryBatch.automatic.is_(True),
            MemoryBatch.created_at >= since,
        )
        async with self._sessionmaker() as session:
            return bool(await session.scalar(query.select_from(MemoryBatch)))

    async def find(self, owner_id: int, batch_id: int) -> Batch:
        """Return one of the owner's batches."""
        async with self._sessionmaker() as session:
            return _value(await self._load(session, owner_id, batch_id))

    async def _load(self, session: AsyncSession, owner_id: int, batch_id: int) -> MemoryBatch:
        """Load one of the owner's batches, or raise BatchNotFound."""
        batch = await session.scalar(
            select(MemoryBatch).where(MemoryBatch.id == batch_id, MemoryBatch.owner_id == owner_id)
        )
        if batch is None:
            raise BatchNotFound(batch_id)
        return batch

    async def toggle(self, owner_id: int, batch_id: int, index: int) -> Batch:
        """Skip a line of a proposed batch, or take it back in."""
        async with self._sessionmaker.begin() as session:
            batch = await self._proposed(session, owner_id, batch_id)
            lines = read_lines(batch.plan)
            if not 0 <= index < len(lines):
                raise BatchNotFound(batch_id)
            lines[index] = lines[index].model_copy(update={"skip": not lines[index].skip})
            batch.plan = stored_lines(lines)
            return _value(batch)

    async def cancel(self, owner_id: int, batch_id: int) -> Batch:
        """Drop a proposed batch without changing any memory."""
        async with self._sessionmaker.begin() as session:
            batch = await self._proposed(session, owner_id, batch_id)
            await self._claim(session, batch, BatchState.CANCELLED)
            return _value(batch)

    async def _proposed(self, session: AsyncSession, owner_id: int, batch_id: int) -> MemoryBatch:
        """Load one of the owner's batches that is still waiting for a decision."""
        batch = await self._load(session, owner_id, batch_id)
        if batch.state != BatchState.PROPOSED.value:
            raise BatchDecided(batch_id)
        return batch

    async def _claim(self, session: AsyncSession, batch: MemoryBatch, state: BatchState) -> None:
        """Move a proposed batch to state, or raise BatchDecided if another tap did first."""
        claimed = await session.execute(
            update(MemoryBatch)
            .where(MemoryBatch.id == batch.id, MemoryBatch.state == BatchState.PROPOSED.value)
            .values(state=state.value)
            .execution_options(synchronize_session=False)
        )
        if affected(claimed) == 0:
            raise BatchDecided(batch.id)
        batch.state = state.value

    async def apply(self, owner_id: int, batch_id: int) -> Batch:
        """Apply the chosen lines of a proposed batch in one transaction, as one batch.

        Raises BatchStale (and changes nothing) if a memory changed since the plan was made.
        """
        async with memory_change(self._sessionmaker, owner_id) as session:
            batch = await self._proposed(session, owner_id, batch_id)
            await self._claim(session, batch, BatchState.APPLIED)
            chosen = [line for line in read_lines(batch.plan) if not line.skip]
            adds = sum(isinstance(line, ImportLine) for line in chosen)
            if adds and await count_active(session, owner_id) + adds > self._limit:
                raise BatchTooBig(self._limit)
            for line in chosen:
                steps = await apply_line(session, owner_id, line)
                session.add_all(record_steps(batch.id, steps, line.reason))
            await session.flush()
            batch.digest = digest_of(await load_active_memories(session, owner_id))
            return _value(batch)

    async def revert(self, owner_id: int, batch_id: int) -> Reverted:
        """Undo all of an applied batch (an Undo all's batch too: that is Redo all)."""
        async with memory_change(self._sessionmaker, owner_id) as session:
            batch = await self._load(session, owner_id, batch_id)
            if batch.state != BatchState.APPLIED.value:
                raise BatchDecided(batch_id)
            claimed = await session.execute(
                update(MemoryBatch)
                .where(MemoryBatch.id == batch.id, MemoryBatch.undone_at.is_(None))
                .values(undone_at=utcnow())
                .execution_options(synchronize_session=False)
            )
            if affected(claimed) == 0:
                raise BatchDecided(batch_id)
            reverted = await revert_batch(session, owner_id, batch.id, self._limit)
            if batch.kind == BatchKind.TIDY.value:
                # A pass's fingerprint is of what it left: the next pass sees the change.
                batch.digest = None
            return reverted

    async def applied(self, owner_id: int) -> list[BatchSummary]:
        """Return the owner's applied batches, newest first, with what each did."""
        return await applied_batches(self._sessionmaker, owner_id)

    async def owners_with_memories(self) -> list[int]:
        """Return every owner with an active memory."""
        query = select(Memory.owner_id).where(Memory.deleted_at.is_(None)).distinct()
        async with self._sessionmaker() as session:
            return sorted((await session.scalars(query)).all())

    async def notes(self, owner_id: int, memory_id: str) -> list[BatchNote]:
        """Return what every batch did to one of the owner's memories, oldest first."""
        query = (
            select(MemoryBatch.id, MemoryBatch.kind, MemoryBatchChange)
            .join(MemoryBatchChange, MemoryBatchChange.batch_id == MemoryBatch.id)
            .where(MemoryBatch.owner_id == owner_id, MemoryBatchChange.memory_id == memory_id)
            .order_by(MemoryBatchChange.id)
        )
        async with self._sessionmaker() as session:
            rows = (await session.execute(query)).all()
        return [
            BatchNote(
                row.id,
                BatchKind(row.kind),
                change.after_version,
                change.after_deleted,
                change.reason,
            )
            for row in rows
            if (change := row.MemoryBatchChange) is not None
        ]
