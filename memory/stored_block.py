"""Each owner's stored memory block, and the transaction every change to their memories runs in.

A change deletes the stored block in its own transaction, and on Postgres a rendering shares the
owner's lock that a change takes alone, so a stored block always matches its memories.
"""

import contextlib
import functools
from collections.abc import AsyncIterator

from sqlalchemy import Delete, Insert, Select, bindparam, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memory.block import render_memory_block
from memory.models import StoredMemoryBlock, utcnow
from memory.queries import load_active_memories, lock_owner_memories


@functools.cache
def _stored_statement() -> Select:
    """Select the owner's stored block."""
    return select(StoredMemoryBlock.block).where(StoredMemoryBlock.owner_id == bindparam("owner"))


@functools.cache
def _store_statement(dialect_name: str) -> Insert:
    """Insert a block unless another transaction stored one first (it is the same block)."""
    dialect_insert = postgresql.insert if dialect_name == "postgresql" else sqlite.insert
    return dialect_insert(StoredMemoryBlock).on_conflict_do_nothing(
        index_elements=[StoredMemoryBlock.owner_id]
    )


@functools.cache
def _drop_statement() -> Delete:
    """Delete the owner's stored block."""
    return delete(StoredMemoryBlock).where(StoredMemoryBlock.owner_id == bindparam("owner"))


async def owner_block(session: AsyncSession, owner_id: int) -> str:
    """Return the owner's memory block: the stored one, or a new rendering that is then stored."""
    connection = await session.connection()
    stored = (await connection.execute(_stored_statement(), {"owner": owner_id})).scalar()
    if stored is not None:
        return stored
    await lock_owner_memories(session, owner_id, shared=True)
    block = render_memory_block(await load_active_memories(session, owner_id))
    await connection.execute(
        _store_statement(connection.dialect.name),
        {"owner_id": owner_id, "block": block, "rendered_at": utcnow()},
    )
    return block


@contextlib.asynccontextmanager
async def memory_change(
    sessionmaker: async_sessionmaker[AsyncSession], owner_id: int
) -> AsyncIterator[AsyncSession]:
    """Open a transaction that changes the owner's memories and drops their stored block."""
    async with sessionmaker.begin() as session:
        await lock_owner_memories(session, owner_id, shared=False)
        connection = await session.connection()
        await connection.execute(_drop_statement(), {"owner": owner_id})
        yield session
