"""Keep each owner's rendered memory block, so a conversation starts without re-rendering it.

MemoryStore deletes the kept block in the same transaction as any change to the owner's
memories, and on Postgres a rendering shares the owner's lock that a change takes alone, so a
kept block always matches the memories it was rendered from.
"""

import functools

from sqlalchemy import Insert, Select, bindparam, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from memory.block import render_memory_block
from memory.models import RenderedMemoryBlock, utcnow
from memory.store import load_active_memories, lock_owner_memories


@functools.cache
def _kept_statement() -> Select:
    """Select the owner's kept block."""
    return select(RenderedMemoryBlock.block).where(
        RenderedMemoryBlock.owner_id == bindparam("owner")
    )


@functools.cache
def _keep_statement(dialect_name: str) -> Insert:
    """Insert a block unless another transaction kept one first (it is the same block)."""
    dialect_insert = postgresql.insert if dialect_name == "postgresql" else sqlite.insert
    return dialect_insert(RenderedMemoryBlock).on_conflict_do_nothing(
        index_elements=[RenderedMemoryBlock.owner_id]
    )


async def owner_block(session: AsyncSession, owner_id: int) -> str:
    """Return the owner's memory block: the kept one, or a new rendering that is then kept."""
    connection = await session.connection()
    kept = (await connection.execute(_kept_statement(), {"owner": owner_id})).scalar()
    if kept is not None:
        return kept
    await lock_owner_memories(session, owner_id, shared=True)
    block = render_memory_block(await load_active_memories(session, owner_id))
    await connection.execute(
        _keep_statement(connection.dialect.name),
        {"owner_id": owner_id, "block": block, "rendered_at": utcnow()},
    )
    return block
