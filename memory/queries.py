"""SQL the memory modules share: current versions, plain-column items, and per-owner locks."""

import functools
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Row, ScalarSelect, Select, bindparam, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import QueryableAttribute, aliased
from sqlalchemy.sql import ColumnElement

from memory.block import DISPLAY_ORDER
from memory.categories import Category
from memory.items import MemoryItem, MemoryNotFound, MemoryVersionItem
from memory.models import Memory, MemoryVersion

# Plain columns, not ORM objects: building 2,000 objects for the block took most of a turn.
# Each is named as the MemoryItem field it fills, and read back by that name.
ITEM_COLUMNS = (
    Memory.id,
    Memory.owner_id,
    Memory.category,
    Memory.subject,
    MemoryVersion.content,
    MemoryVersion.version_number.label("version"),
    Memory.created_at,
    MemoryVersion.created_at.label("updated_at"),
    Memory.deleted_at,
    Memory.pinned,
)

# pg_advisory_xact_lock's two-key space for "an owner's memories" ("mblk" in ASCII); the
# migration lock uses the one-key space, which never overlaps it.
MEMORY_LOCK_SPACE = 0x6D626C6B


def version_item(version: MemoryVersion) -> MemoryVersionItem:
    """Copy a version row into a plain value."""
    return MemoryVersionItem(
        version_number=version.version_number,
        content=version.content,
        created_at=version.created_at,
        source_conversation_id=version.source_conversation_id,
    )


class MemoryColumns(Protocol):
    """A memory's own columns, by name: an ORM Memory or a row selecting them."""

    id: str
    owner_id: int
    category: str
    subject: str | None
    created_at: datetime
    deleted_at: datetime | None
    pinned: bool


class VersionColumns(Protocol):
    """A version's content columns, by name: an ORM MemoryVersion or a MemoryVersionItem."""

    # Read-only, as a MemoryVersionItem's are.
    @property
    def version_number(self) -> int: ...
    @property
    def content(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...


def item_of(memory: MemoryColumns, version: VersionColumns) -> MemoryItem:
    """Combine a memory with its current version."""
    return MemoryItem(
        id=memory.id,
        owner_id=memory.owner_id,
        category=Category(memory.category),
        subject=memory.subject,
        content=version.content,
        version=version.version_number,
        created_at=memory.created_at,
        updated_at=version.created_at,
        deleted_at=memory.deleted_at,
        pinned=memory.pinned,
    )


def item_from_row(row: Row[*tuple[Any, ...]]) -> MemoryItem:
    """Build an item from a row of ITEM_COLUMNS, reading each column by its name."""
    values = row._mapping
    return MemoryItem(
        id=values["id"],
        owner_id=values["owner_id"],
        category=Category(values["category"]),
        subject=values["subject"],
        content=values["content"],
        version=values["version"],
        created_at=values["created_at"],
        updated_at=values["updated_at"],
        deleted_at=values["deleted_at"],
        pinned=values["pinned"],
    )


def _latest_version_number() -> ScalarSelect[int]:
    """Return a correlated subquery for a memory's highest version number."""
    other = aliased(MemoryVersion)
    return (
        select(func.max(other.version_number))
        .where(other.memory_id == Memory.id)
        .correlate(Memory)
        .scalar_subquery()
    )


def with_current_version(
    *columns: ColumnElement[Any] | QueryableAttribute[Any],
) -> Select[*tuple[Any, ...]]:
    """Select memories joined to their current version (both rows, or the given columns)."""
    return select(*(columns or (Memory, MemoryVersion))).join(
        MemoryVersion,
        (MemoryVersion.memory_id == Memory.id)
        & (MemoryVersion.version_number == _latest_version_number()),
    )


@functools.cache
def _active_memories_statement() -> Select[*tuple[Any, ...]]:
    """Select an owner's active memories with their current content, in block order."""
    return (
        with_current_version(*ITEM_COLUMNS)
        .where(Memory.owner_id == bindparam("owner"), Memory.deleted_at.is_(None))
        .order_by(*DISPLAY_ORDER)
    )


async def load_active_memories(session: AsyncSession, owner_id: int) -> list[MemoryItem]:
    """Return the owner's active memories in block order, inside the caller's session."""
    connection = await session.connection()
    rows = await connection.execute(_active_memories_statement(), {"owner": owner_id})
    return [item_from_row(row) for row in rows]


async def load_with_current(
    session: AsyncSession, owner_id: int, memory_id: str
) -> tuple[Memory, MemoryVersion]:
    """Load a memory of this owner, deleted or not, with its current version."""
    query = with_current_version().where(Memory.id == memory_id, Memory.owner_id == owner_id)
    return await _memory_with_current(session, query, memory_id)


async def load_active_with_current(
    session: AsyncSession, owner_id: int, memory_id: str
) -> tuple[Memory, MemoryVersion]:
    """Load an active memory of this owner with its current version."""
    query = with_current_version().where(
        Memory.id == memory_id, Memory.owner_id == owner_id, Memory.deleted_at.is_(None)
    )
    return await _memory_with_current(session, query, memory_id)


async def _memory_with_current(
    session: AsyncSession, query: Select[*tuple[Any, ...]], memory_id: str
) -> tuple[Memory, MemoryVersion]:
    """Run a query for one memory and its current version, or raise MemoryNotFound."""
    row = (await session.execute(query)).first()
    if row is None:
        raise MemoryNotFound(memory_id)
    return row.Memory, row.MemoryVersion


async def lock_owner_memories(session: AsyncSession, owner_id: int) -> None:
    """On Postgres, take an owner's memories for a change, alone.

    Changes take the lock alone, renderings of the block share it, so a block is never
    rendered from memories a concurrent change is replacing. SQLite needs none: it has one
    writer at a time, and the bot one connection.
    """
    await _owner_lock(session, owner_id, "pg_advisory_xact_lock")


async def share_owner_memories(session: AsyncSession, owner_id: int) -> None:
    """On Postgres, hold an owner's memories still to render their block (a shared lock)."""
    await _owner_lock(session, owner_id, "pg_advisory_xact_lock_shared")


async def _owner_lock(session: AsyncSession, owner_id: int, function: str) -> None:
    """Take an advisory lock on the owner's memories with this function, on Postgres only."""
    connection = await session.connection()
    if connection.dialect.name != "postgresql":
        return
    await connection.execute(
        text(f"SELECT {function}(:space, :key)"),
        {"space": MEMORY_LOCK_SPACE, "key": owner_id % 2**31},
    )


async def lock_memory(session: AsyncSession, owner_id: int, memory_id: str) -> None:
    """Queue behind other writers of this memory (a row lock on Postgres).

    FOR NO KEY UPDATE leaves inserts that reference the row alone. SQLite has no row locks;
    the unique (memory_id, version_number) turns its race into a retry.
    """
    await session.execute(
        select(Memory.id)
        .where(Memory.id == memory_id, Memory.owner_id == owner_id)
        .with_for_update(key_share=True)
    )


async def load_items(
    session: AsyncSession, owner_id: int, memory_ids: list[str]
) -> list[MemoryItem]:
    """Return the owner's memories with these ids, with their current content, in block order."""
    if not memory_ids:
        return []
    # "owner_id + 0": the owner is checked on the rows the ids find, never by its index. Given
    # both, SQLite without statistics reads the owner's index: all of their memories (60 ms
    # at 100,000), not the few ids.
    query = (
        with_current_version(*ITEM_COLUMNS)
        .where(Memory.owner_id + 0 == owner_id, Memory.id.in_(memory_ids))
        .order_by(*DISPLAY_ORDER)
    )
    return [item_from_row(row) for row in await session.execute(query)]


async def count_active(session: AsyncSession, owner_id: int) -> int:
    """Return how many active memories the owner has."""
    query = select(func.count()).where(Memory.owner_id == owner_id, Memory.deleted_at.is_(None))
    return await session.scalar(query.select_from(Memory)) or 0
