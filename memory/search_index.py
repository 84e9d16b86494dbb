"""The full-text index of memories: kept in step with each change, searched per owner.

On SQLite an FTS5 table keyed by the memory id read as a base-62 number, with the owner in
an unindexed column (migration 0009); on Postgres a table with a generated tsvector and a GIN
index (migration 0006), joined to the memories for their owner. Only active memories are
indexed: a change adds, replaces or removes rows in the transaction that makes it. A search
keeps to its owner's rows in SQL, before any limit: another owner's rows can never crowd
its matches out, whatever words they hold.
"""

import string
from collections.abc import Collection, Iterable

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from memory.items import MemoryItem
from memory.search_rank import owner_size, ranked_among
from memory.search_terms import fts5_query, index_text, search_terms, tsquery

_SQLITE_PUT = (
    "INSERT OR REPLACE INTO agent_memory_search(rowid, subject, content, owner_id) "
    "VALUES (:rowid, :subject, :content, :owner_id)"
)
_POSTGRES_PUT = (
    "INSERT INTO agent_memory_search(memory_id, subject, content) "
    "VALUES (:memory_id, :subject, :content) ON CONFLICT (memory_id) DO UPDATE "
    "SET subject = excluded.subject, content = excluded.content"
)
# Only this many matches are ranked: a word in thousands of memories would otherwise cost a
# score for each; past it, the best come from the first found.
CANDIDATES = 500
# bm25 weights per column (subject, content): a subject match counts three times.
_SQLITE_SEARCH = (
    "SELECT rowid FROM (SELECT rowid, bm25(agent_memory_search, 3.0, 1.0) AS score "
    "FROM agent_memory_search WHERE agent_memory_search MATCH :query AND owner_id = :owner "
    "LIMIT :candidates) "
    "ORDER BY score LIMIT :limit"
)
# ts_rank's weights are {D, C, B, A}, each at most 1: a subject (A) counts about three times
# a content word (B). Each word's rank is weighted by its rarity (memory/search_rank.py).
_POSTGRES_SEARCH = (
    "WITH found AS MATERIALIZED (SELECT memory_id, document FROM agent_memory_search "
    "JOIN agent_memories ON agent_memories.id = memory_id "
    "WHERE agent_memories.owner_id = :owner AND document @@ to_tsquery('simple', :query) "
    "LIMIT :candidates), counted AS ({counted}) "
    "SELECT memory_id FROM found CROSS JOIN counted ORDER BY {score} DESC, memory_id "
    "LIMIT :limit"
)
_POSTGRES_RANK = "ts_rank('{{0, 0, 0.3, 1}}', document, {q})"
# The owner's memories, for the IDF's N.
_OWNED = ("agent_memories", "AND deleted_at IS NULL")


_CANDIDATES = {"candidates": CANDIDATES}


def id_number(memory_id: str) -> int:
    """Return a memory id as a number (base 62), the key of its row in SQLite's index."""
    number = 0
    for char in memory_id:
        number = number * 62 + _DIGITS[char]
    return number


def id_of_number(number: int) -> str:
    """Return the memory id a number stands for."""
    chars = []
    for _ in range(8):
        number, digit = divmod(number, 62)
        chars.append(_ALPHABET62[digit])
    return "".join(reversed(chars))


# Migration 0006 keys the rows it indexes with the same digits in the same order.
_ALPHABET62 = string.ascii_uppercase + string.ascii_lowercase + string.digits
_DIGITS = {char: value for value, char in enumerate(_ALPHABET62)}


async def _dialect(session: AsyncSession) -> str:
    """Return the name of the session's database dialect."""
    return (await session.connection()).dialect.name


async def index_items(session: AsyncSession, items: Iterable[MemoryItem]) -> None:
    """Add or replace memories in the index, in the caller's transaction."""
    sqlite = await _dialect(session) == "sqlite"
    rows = [
        {
            "subject": index_text(item.subject or "", item.owner_id),
            "content": index_text(item.content, item.owner_id),
            **(
                {"rowid": id_number(item.id), "owner_id": item.owner_id}
                if sqlite
                else {"memory_id": item.id}
            ),
        }
        for item in items
    ]
    if rows:
        await session.execute(text(_SQLITE_PUT if sqlite else _POSTGRES_PUT), rows)


async def unindex(session: AsyncSession, memory_ids: Collection[str]) -> None:
    """Remove memories from the index, in the caller's transaction."""
    if not memory_ids:
        return
    if await _dialect(session) == "sqlite":
        by_rowid = [{"rowid": id_number(memory_id)} for memory_id in memory_ids]
        await session.execute(
            text("DELETE FROM agent_memory_search WHERE rowid = :rowid"), by_rowid
        )
    else:
        by_id = [{"memory_id": memory_id} for memory_id in memory_ids]
        await session.execute(
            text("DELETE FROM agent_memory_search WHERE memory_id = :memory_id"), by_id
        )


async def search_ids(session: AsyncSession, owner_id: int, query: str, limit: int) -> list[str]:
    """Return the ids of the owner's active memories that match the query, best first."""
    terms = search_terms(query)
    if not terms:
        return []
    if await _dialect(session) == "sqlite":
        parameters = {"query": fts5_query(owner_id, terms), "limit": limit, "owner": owner_id}
        found = await session.execute(text(_SQLITE_SEARCH), {**parameters, **_CANDIDATES})
        return [id_of_number(rowid) for (rowid,) in found]
    total = await owner_size(session, owner_id, _OWNED)
    counted, score, ranked = ranked_among(owner_id, terms, total, "document", _POSTGRES_RANK)
    parameters = {"query": tsquery(owner_id, terms), "limit": limit, "owner": owner_id}
    statement = _POSTGRES_SEARCH.format(counted=counted, score=score)
    rows = await session.execute(text(statement), {**parameters, **ranked, **_CANDIDATES})
    return [memory_id for (memory_id,) in rows]
