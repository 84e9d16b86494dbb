"""The Mini App's list: each memory's plain columns, the block's ids and the switch, in one trip."""

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import DateTime, Select, bindparam, select, type_coerce
from sqlalchemy.ext.asyncio import AsyncSession

from memory.block import DISPLAY_ORDER
from memory.models import Memory, MemoryVersion, StoredMemoryBlock
from memory.queries import with_current_version
from memory.stored_block import owner_block
from memory.switch import load_memory_enabled, memory_enabled_expression

# Enough to tell memories apart in a list; the whole text comes when one is opened.
SHORT_CONTENT_CHARS = 200
# The driver's own datetimes, without UTCDateTime's step per value: naive UTC on SQLite.
RAW_TIME = DateTime(timezone=True)
# Plain columns, rows handed out as read: no ORM object, no MemoryItem, no copy per row
# (building 1,000 MemoryItems and their aware datetimes took most of the list's 100 ms).
LIST_COLUMNS = (
    Memory.id,
    Memory.category,
    Memory.subject,
    MemoryVersion.content,
    Memory.pinned,
    type_coerce(Memory.created_at, RAW_TIME).label("created_at"),
    type_coerce(MemoryVersion.created_at, RAW_TIME).label("updated_at"),
)


# A row of LIST_COLUMNS, in their order: id, category, subject, content, pinned, created_at,
# updated_at (UTC, naive on SQLite). Unpacked, not read by name: a name costs a lookup per row.
ListedMemory = tuple[str, str, str | None, str, bool, datetime, datetime]
# What a list is as of: when the owner's stored block was rendered (any change to their
# memories deletes it, so a list read with it holds while it stays), and the switch.
ListStamp = tuple[datetime, bool]


@dataclass(frozen=True)
class MemoryList:
    """The active memories in block order, the recently deleted, the block's ids, the switch."""

    memories: list[ListedMemory]
    deleted: list[ListedMemory]
    in_block: frozenset[str]
    enabled: bool
    stamp: ListStamp | None  # None: changed while it was read, so it is no one's to keep


def short(content: str) -> str:
    """Cut a memory's content to SHORT_CONTENT_CHARS, marking the cut."""
    if len(content) <= SHORT_CONTENT_CHARS:
        return content
    return content[: SHORT_CONTENT_CHARS - 1] + "…"


def utc_text(moment: datetime) -> str:
    """Return a listed UTC time as ISO 8601 text with its offset, naive or not."""
    return moment.isoformat() if moment.tzinfo is not None else moment.isoformat() + "+00:00"


@functools.cache
def _stamp_statement() -> Select[datetime, bool]:
    """Select when the owner's stored block was rendered, and their switch (no row: no block)."""
    return select(
        type_coerce(StoredMemoryBlock.rendered_at, RAW_TIME),
        memory_enabled_expression(bindparam("owner")),
    ).where(StoredMemoryBlock.owner_id == bindparam("owner"))


@functools.cache
def _active_statement() -> Select[*tuple[Any, ...]]:
    """Select an owner's active memories' list columns, in block order."""
    return (
        with_current_version(*LIST_COLUMNS)
        .where(Memory.owner_id == bindparam("owner"), Memory.deleted_at.is_(None))
        .order_by(*DISPLAY_ORDER)
    )


@functools.cache
def _deleted_statement() -> Select[*tuple[Any, ...]]:
    """Select an owner's most recently deleted memories' list columns."""
    return (
        with_current_version(*LIST_COLUMNS)
        .where(Memory.owner_id == bindparam("owner"), Memory.deleted_at.is_not(None))
        .order_by(Memory.deleted_at.desc(), Memory.id)
        .limit(bindparam("limit"))
    )


async def _listed(
    session: AsyncSession, statement: Select[Any], **values: object
) -> list[ListedMemory]:
    """Run a list statement; return its rows (sequences of LIST_COLUMNS' values)."""
    connection = await session.connection()
    return cast(list[ListedMemory], (await connection.execute(statement, values)).all())


async def load_stamp(session: AsyncSession, owner_id: int) -> ListStamp | None:
    """Return what the owner's list is as of now, or None while no block is stored."""
    connection = await session.connection()
    row = (await connection.execute(_stamp_statement(), {"owner": owner_id})).first()
    return (row[0], bool(row[1])) if row is not None else None


async def load_list(session: AsyncSession, owner_id: int, budget: int, deleted: int) -> MemoryList:
    """Return the owner's list inside the caller's transaction (it may store the block).

    The stamp is read before the rows: a change after it deletes the block, so a list newer
    than its stamp is never taken for a later one.
    """
    block = await owner_block(session, owner_id, budget)
    stamp = await load_stamp(session, owner_id)
    active = await _listed(session, _active_statement(), owner=owner_id)
    gone = await _listed(session, _deleted_statement(), owner=owner_id, limit=deleted)
    # No stamp: a change deleted the block between the two reads; the switch is read alone.
    enabled = stamp[1] if stamp is not None else await load_memory_enabled(session, owner_id)
    return MemoryList(active, gone, frozenset(block.memory_ids), enabled, stamp)
