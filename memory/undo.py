"""The undo log: each change the model makes is recorded with it, and can be undone once."""

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memory.budget import DEFAULT_MEMORY_LIMIT
from memory.db import affected
from memory.items import (
    AlreadyUndone,
    CannotUndo,
    ChangeKind,
    ChangeNotFound,
    MemoryAtLimit,
    MemoryItem,
    UndoRefusal,
    UndoResult,
)
from memory.models import Memory, MemoryChangeRecord, MemoryVersion, utcnow
from memory.queries import item_of, load_with_current, lock_memory
from memory.search_index import index_items, unindex
from memory.stored_block import memory_change
from memory.writes import bring_back, new_version


async def record_change(
    session: AsyncSession, owner_id: int, memory_id: str, kind: ChangeKind, version_number: int
) -> int:
    """Log a change in the caller's transaction, so the user can undo it; return its id."""
    record = MemoryChangeRecord(
        owner_id=owner_id,
        memory_id=memory_id,
        kind=kind.value,
        version_number=version_number,
        created_at=utcnow(),
    )
    session.add(record)
    await session.flush()
    return record.id


async def _claim(
    session: AsyncSession, owner_id: int, change_id: int, now: datetime
) -> MemoryChangeRecord:
    """Mark the owner's change undone, or raise if it is unknown or was undone before."""
    change = await session.scalar(
        select(MemoryChangeRecord).where(
            MemoryChangeRecord.id == change_id, MemoryChangeRecord.owner_id == owner_id
        )
    )
    if change is None:
        raise ChangeNotFound(change_id)
    # Claiming the entry first makes a second, concurrent undo find nothing to claim.
    claimed = await session.execute(
        update(MemoryChangeRecord)
        .where(MemoryChangeRecord.id == change.id, MemoryChangeRecord.undone_at.is_(None))
        .values(undone_at=now)
    )
    if affected(claimed) == 0:
        raise AlreadyUndone(change_id)
    return change


async def _previous_content(session: AsyncSession, memory_id: str, version_number: int) -> str:
    """Return the content a memory had before this version."""
    content = await session.scalar(
        select(MemoryVersion.content).where(
            MemoryVersion.memory_id == memory_id,
            MemoryVersion.version_number == version_number - 1,
        )
    )
    if content is None:
        # Versions are append-only: an update's version always has one before it.
        raise LookupError(f"memory {memory_id} has no version {version_number - 1}")
    return content


async def _revert(
    session: AsyncSession,
    change: MemoryChangeRecord,
    memory: Memory,
    current: MemoryVersion,
    now: datetime,
    limit: int,
) -> MemoryItem:
    """Undo one change to a memory as it is now; return the memory afterwards."""
    kind = ChangeKind(change.kind)
    if kind is ChangeKind.FORGOTTEN:
        if memory.deleted_at is None:
            raise CannotUndo(UndoRefusal.RESTORED)
        try:
            await bring_back(session, memory, current, limit)
        except MemoryAtLimit:
            raise CannotUndo(UndoRefusal.FULL) from None
        return item_of(memory, current)
    if memory.deleted_at is not None:
        raise CannotUndo(UndoRefusal.DELETED)
    if current.version_number != change.version_number:
        # Undoing it now would also throw away the newer version.
        raise CannotUndo(UndoRefusal.CHANGED)
    if kind is ChangeKind.ADDED:
        memory.deleted_at = now
        await unindex(session, [memory.id])
        return item_of(memory, current)
    previous = await _previous_content(session, memory.id, change.version_number)
    restored = new_version(memory, current.version_number + 1, previous, None)
    session.add(restored)
    after = item_of(memory, restored)
    await index_items(session, [after])
    return after


class UndoLog:
    """Undoes logged changes, each once, unless the memory changed since."""

    def __init__(
        self, sessionmaker: async_sessionmaker[AsyncSession], limit: int = DEFAULT_MEMORY_LIMIT
    ):
        self._sessionmaker = sessionmaker
        self._limit = limit

    async def undo(self, owner_id: int, change_id: int) -> UndoResult:
        """Undo a logged change once, unless the memory has changed since."""
        now = utcnow()
        async with memory_change(self._sessionmaker, owner_id) as session:
            change = await _claim(session, owner_id, change_id, now)
            await lock_memory(session, owner_id, change.memory_id)
            memory, current = await load_with_current(session, owner_id, change.memory_id)
            before = item_of(memory, current)
            after = await _revert(session, change, memory, current, now, self._limit)
            return UndoResult(ChangeKind(change.kind), before, after)
