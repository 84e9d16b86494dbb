"""Read an owner's memories and all their versions for an export, a batch at a time.

An owner may have many thousands of memories with many versions each. Reading them in one
query would hold the event loop (and every chat) while the rows become values, so they are
read a few hundred memories at a time, as plain columns, not ORM objects.
"""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memory.items import MemoryRecord, MemoryVersionItem
from memory.models import Memory, MemoryVersion
from memory.queries import item_of

# Memories per query: each batch holds the loop for a few milliseconds only.
EXPORT_BATCH = 100

_MEMORY_COLUMNS = (
    Memory.id,
    Memory.owner_id,
    Memory.category,
    Memory.subject,
    Memory.created_at,
    Memory.deleted_at,
    Memory.pinned,
)
_VERSION_COLUMNS = (
    MemoryVersion.memory_id,
    MemoryVersion.version_number,
    MemoryVersion.content,
    MemoryVersion.created_at,
    MemoryVersion.source_conversation_id,
)


async def export_records(
    sessionmaker: async_sessionmaker[AsyncSession], owner_id: int, batch: int = EXPORT_BATCH
) -> list[MemoryRecord]:
    """Return every memory of the owner, deleted ones too, with all versions, oldest first."""
    records: list[MemoryRecord] = []
    after: str | None = None
    while True:
        async with sessionmaker() as session:
            memories = await _memories_after(session, owner_id, after, batch)
            if not memories:
                # Paged by id (a key that compares the same in every engine), shown by age.
                return sorted(records, key=lambda r: (r.item.created_at, r.item.id))
            ids = [row.id for row in memories]
            query = (
                select(*_VERSION_COLUMNS)
                .where(MemoryVersion.memory_id.in_(ids))
                .order_by(MemoryVersion.memory_id, MemoryVersion.version_number)
            )
            versions = (await session.execute(query)).all()
        records += _records(memories, versions)
        after = memories[-1].id


async def _memories_after(
    session: AsyncSession, owner_id: int, after: str | None, batch: int
) -> Sequence[Row[*tuple[Any, ...]]]:
    """Return the owner's next memories by id, after the given id."""
    query = select(*_MEMORY_COLUMNS).where(Memory.owner_id == owner_id)
    if after is not None:
        query = query.where(Memory.id > after)
    ordered = query.order_by(Memory.id).limit(batch)
    return (await session.execute(ordered)).all()


def _records(
    memories: Sequence[Row[*tuple[Any, ...]]], versions: Sequence[Row[*tuple[Any, ...]]]
) -> list[MemoryRecord]:
    """Pair each memory row with its version rows; the newest version is its content."""
    by_memory: dict[str, list[MemoryVersionItem]] = {}
    for row in versions:
        by_memory.setdefault(row.memory_id, []).append(
            MemoryVersionItem(
                row.version_number, row.content, row.created_at, row.source_conversation_id
            )
        )
    records = []
    for row in memories:
        history = by_memory.get(row.id)
        if not history:  # a memory always has a version; one without has nothing to export
            continue
        item = item_of(row, history[-1])
        records.append(MemoryRecord(item, history))
    return records
