"""The memories a reply drew on, kept with the model's turn that ends it, and read by owner."""

from collections.abc import Sequence

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.models import Turn
from memory.models import Memory


class ReplySources:
    """Records which of the owner's memories a reply cited, and reads them back by owner."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]):
        self._sessionmaker = sessionmaker

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
