"""Each owner's stored memory block, and the transaction every change to their memories runs in.

A change deletes the stored block in its own transaction, and on Postgres a rendering shares the
owner's lock that a change takes alone, so a stored block always matches its memories.
"""

import contextlib
import functools
from collections.abc import AsyncIterator

from sqlalchemy import Delete, Insert, Select, bindparam, delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memory.block import CHOICE_ORDER, MemoryBlock, candidates_needed, choose, fitted_block
from memory.db import dialect_insert
from memory.models import Memory, StoredMemoryBlock, utcnow
from memory.queries import (
    count_active,
    load_items,
    lock_owner_memories,
    share_owner_memories,
)
from memory.write_check import checked_write


@functools.cache
def _stored_statement() -> Select[str, list[str]]:
    """Select the owner's stored block and the ids of the memories it holds."""
    return select(StoredMemoryBlock.block, StoredMemoryBlock.memory_ids).where(
        StoredMemoryBlock.owner_id == bindparam("owner")
    )


@functools.cache
def _store_statement(dialect_name: str) -> Insert:
    """Insert a block unless another transaction stored one first (it is the same block)."""
    return dialect_insert(dialect_name)(StoredMemoryBlock).on_conflict_do_nothing(
        index_elements=[StoredMemoryBlock.owner_id]
    )


@functools.cache
def _drop_statement() -> Delete:
    """Delete the owner's stored block."""
    return delete(StoredMemoryBlock).where(StoredMemoryBlock.owner_id == bindparam("owner"))


@functools.cache
def _candidates_statement() -> Select[str, int]:
    """Select the owner's active memories, with their lines' tokens, in the choice order."""
    return (
        select(Memory.id, Memory.tokens)
        .where(Memory.owner_id == bindparam("owner"), Memory.deleted_at.is_(None))
        # deleted_at is NULL in every row, but Postgres only reads the index backwards
        # (instead of sorting all the owner's memories) when the order names it too.
        .order_by(Memory.deleted_at.desc(), *CHOICE_ORDER)
        .limit(bindparam("limit"))
    )


async def block_ids(session: AsyncSession, owner_id: int, budget: int) -> list[str]:
    """Return the ids of the owner's memories the block holds, by the block rule."""
    connection = await session.connection()
    rows = await connection.execute(
        _candidates_statement(), {"owner": owner_id, "limit": candidates_needed(budget)}
    )
    return choose(rows.all(), budget)


async def owner_block(session: AsyncSession, owner_id: int, budget: int) -> MemoryBlock:
    """Return the owner's memory block: the stored one, or a new rendering that is then stored."""
    connection = await session.connection()
    stored = (await connection.execute(_stored_statement(), {"owner": owner_id})).first()
    if stored is not None:
        return MemoryBlock(stored.block, tuple(stored.memory_ids))
    await share_owner_memories(session, owner_id)
    chosen = await block_ids(session, owner_id, budget)
    by_id = {item.id: item for item in await load_items(session, owner_id, chosen)}
    active = await count_active(session, owner_id)
    block = fitted_block([by_id[memory_id] for memory_id in chosen], active, budget)
    values = {"block": block.text, "memory_ids": list(block.memory_ids), "rendered_at": utcnow()}
    await connection.execute(
        _store_statement(connection.dialect.name), {"owner_id": owner_id, **values}
    )
    return block


@contextlib.asynccontextmanager
async def memory_change(
    sessionmaker: async_sessionmaker[AsyncSession], owner_id: int
) -> AsyncIterator[AsyncSession]:
    """Open a transaction that changes the owner's memories and drops their stored block.

    Its first statement is the write check in force (memory.write_check), if any.
    """
    async with checked_write(sessionmaker) as session:
        await lock_owner_memories(session, owner_id)
        connection = await session.connection()
        await connection.execute(_drop_statement(), {"owner": owner_id})
        yield session
