"""The memories a reply drew on, kept with the model's turn that ends it, and read by owner."""

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, Text, bindparam, cast, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.blocks import Content
from bot.conversations.content import turn_words
from bot.conversations.models import Turn
from memory.ids import is_memory_id
from memory.models import Memory
from memory.text import shorten

# How many of the owner's newest turns are looked through for the replies citing one memory:
# the work is bounded however long the history; older replies are not shown.
CITING_SCAN = 5_000
EXCERPT_CHARS = 160


@dataclass(frozen=True)
class CitingReply:
    """A reply that drew on a memory: its turn, when it was stored, and its first words."""

    turn_id: int
    created_at: datetime
    excerpt: str


def excerpt(words: str) -> str:
    """Return a reply's words on one line, cut to EXCERPT_CHARS with the cut marked."""
    line = " ".join(words.split())
    return shorten(line, EXCERPT_CHARS)


class ReplySources:
    """Records which of the owner's memories a reply cited, and reads them back by owner."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], scan: int = CITING_SCAN):
        self._sessionmaker = sessionmaker
        self._scan = scan

    async def record(self, turn_id: int, owner_id: int, memory_ids: Sequence[str]) -> list[str]:
        """Keep with the turn the cited ids that are the owner's memories; return those.

        An id that is unknown, or another owner's, is dropped: it never reaches the user.
        """
        wanted = list(dict.fromkeys(memory_ids))
        if not wanted:
            return []
        owned = select(Memory.id).where(Memory.owner_id == owner_id, Memory.id.in_(wanted))
        async with self._sessionmaker.begin() as session:
            found = set((await session.scalars(owned)).all())
            kept = [memory_id for memory_id in wanted if memory_id in found]
            if kept:
                stored = update(Turn).where(Turn.id == turn_id, Turn.owner_id == owner_id)
                await session.execute(stored.values(cited_memory_ids=kept))
        return kept

    async def of_turn(self, owner_id: int, turn_id: int) -> list[str] | None:
        """Return the memory ids the owner's turn cited, or None if no such turn cited any."""
        query = select(Turn.cited_memory_ids).where(Turn.id == turn_id, Turn.owner_id == owner_id)
        async with self._sessionmaker() as session:
            cited = await session.scalar(query)
        return list(cited) if cited else None

    async def citing(self, owner_id: int, memory_id: str, limit: int) -> list[CitingReply]:
        """Return the owner's newest replies that drew on the memory, newest first, at most limit.

        Only the owner's own turns are read, and only the newest scan (CITING_SCAN) of them.
        """
        if not is_memory_id(memory_id):
            return []
        async with self._sessionmaker() as session:
            found = (await session.execute(_citing_statement(), {
                "owner": owner_id, "scan": self._scan, "quoted": f'%"{memory_id}"%',
                "limit": limit,
            })).all()  # fmt: skip
            wanted = [turn_id for turn_id, cited in found if memory_id in (cited or ())]
            rows = (await session.execute(_replies_statement(), {"ids": wanted})).all()
        return [
            CitingReply(turn_id, created_at, excerpt(turn_words("assistant", content)))
            for turn_id, created_at, content in rows
        ]


@functools.cache
def _citing_statement() -> Select[int, list[str] | None]:
    """Select the newest of the owner's recent turns whose sources name a memory (quoted)."""
    recent = (
        select(Turn.id)
        .where(Turn.owner_id == bindparam("owner"))
        .order_by(Turn.id.desc())
        .limit(bindparam("scan"))
        .subquery()
    )
    # The oldest turn looked at: from there on, one range of the owner's index.
    oldest = select(func.min(recent.c.id)).scalar_subquery()
    # An id is letters and digits only, so its quoted form is found in the list's JSON text
    # as it is; the list is read again after, so a near match is never shown. The replies'
    # words are read only for those found (statement below): a reply can be long.
    return (
        select(Turn.id, Turn.cited_memory_ids)
        .where(
            Turn.owner_id == bindparam("owner"),
            Turn.id >= oldest,
            cast(Turn.cited_memory_ids, Text).like(bindparam("quoted")),
        )
        .order_by(Turn.id.desc())
        .limit(bindparam("limit"))
    )


@functools.cache
def _replies_statement() -> Select[int, datetime, Content]:
    """Select the date and content of the turns with these ids, newest first."""
    return (
        select(Turn.id, Turn.created_at, Turn.content)
        .where(Turn.id.in_(bindparam("ids", expanding=True)))
        .order_by(Turn.id.desc())
    )
