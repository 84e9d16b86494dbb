"""Delete everything the bot keeps for an owner, in one transaction: /delete_my_data.

Memories (with every version, the undo log, the search index, the rendered block and the
memory switch, the model's memory questions), conversations with their turns (and so their
search index rows) and the notes waiting for the model there, reminders with their fires,
the time zone, the daily counts of web searches and page reads, and the cached bytes of the
files and voice notes in those conversations.
The chat's turn lease stays: it names only the chat and the process answering it, the
deletion runs holding it (bot/telegram/erase/commands.py), and the lease keeper, which counts
on its row, lets it go at its next tick. A table added later that is keyed by an owner or a
chat belongs here too: tests/telegram/test_delete_my_data.py fails for a table it does not
know: it reads every table of the migrated schema (tests/owner_rows.py), and its fixture
must write a row of the owner to each.

Writes that skip the chat's lane (/memory off and on take effect at once) could land just
after a deletion of the same owner and bring a row back. So a deletion is held as one step
(deleting), and such a write goes through unless_deleted: made before a deletion starts, it
is deleted with the rest; arriving while one runs, it waits for it and is not made.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Select, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.blocks import Content
from bot.conversations.models import Conversation, PendingNote, Turn
from bot.conversations.web_uses import WebUse
from bot.media.file_cache import FileCache
from bot.reminders.models import OwnerZone, Reminder, ReminderFire
from memory.erase import count_memories, erase_memories

T = TypeVar("T")


@dataclass(frozen=True)
class Holdings:
    """How much the bot keeps for an owner: what /delete_my_data would delete."""

    memories: int = 0
    conversations: int = 0
    reminders: int = 0

    @property
    def empty(self) -> bool:
        """Tell whether nothing worth counting is kept."""
        return not (self.memories or self.conversations or self.reminders)


@dataclass(frozen=True)
class Erased:
    """What a deletion removed: the holdings, and how many cached files."""

    held: Holdings
    files: int


def _count(query: Select[*tuple[Any, ...]]) -> Select[int]:
    """Return a count of the rows of query."""
    return select(func.count()).select_from(query.subquery())


def _file_hashes(contents: list[Content]) -> set[str]:
    """Return the hashes of the files and downloaded voice notes the turns refer to."""
    hashes = set()
    for block in (block for content in contents for block in content):
        if block["type"] == "file":
            hashes.add(block["sha256"])
        elif block["type"] == "voice" and "sha256" in block:
            hashes.add(block["sha256"])
    return hashes


async def _holdings(session: AsyncSession, owner_id: int) -> Holdings:
    """Count what is kept for the owner."""
    conversations = select(Conversation.id).where(Conversation.owner_id == owner_id)
    reminders = select(Reminder.id).where(Reminder.owner_id == owner_id)
    return Holdings(
        memories=await count_memories(session, owner_id),
        conversations=await session.scalar(_count(conversations)) or 0,
        reminders=await session.scalar(_count(reminders)) or 0,
    )


async def _erase_conversations(session: AsyncSession, owner_id: int) -> set[str]:
    """Delete the owner's conversations and turns; return the hashes of their files."""
    mine = select(Conversation.id).where(Conversation.owner_id == owner_id)
    contents = await session.scalars(select(Turn.content).where(Turn.conversation_id.in_(mine)))
    hashes = _file_hashes(list(contents))
    # Turns first, so the search index (SQLite's triggers) sees each one go.
    await session.execute(
        delete(Turn).where(Turn.conversation_id.in_(mine) | (Turn.owner_id == owner_id))
    )
    # They would go with their conversations (a cascade); by owner, nothing is left to chance.
    await session.execute(delete(PendingNote).where(PendingNote.owner_id == owner_id))
    await session.execute(delete(Conversation).where(Conversation.owner_id == owner_id))
    return hashes


async def _erase_reminders(session: AsyncSession, owner_id: int) -> None:
    """Delete the owner's reminders with their fires, and the owner's time zone."""
    mine = select(Reminder.id).where(Reminder.owner_id == owner_id)
    await session.execute(delete(ReminderFire).where(ReminderFire.reminder_id.in_(mine)))
    await session.execute(delete(Reminder).where(Reminder.owner_id == owner_id))
    await session.execute(delete(OwnerZone).where(OwnerZone.owner_id == owner_id))


class DataEraser:
    """Counts and deletes everything kept for an owner; nothing of it can be brought back."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], cache: FileCache):
        self._sessionmaker = sessionmaker
        self._cache = cache
        # Per owner, in this process: the lock a deletion holds, how many deletions were
        # committed, and for one under way, how many had been when it began.
        self._locks: dict[int, asyncio.Lock] = {}
        self._deleted: dict[int, int] = {}
        self._deleting: dict[int, int] = {}
        self._waiting = 0

    @property
    def waiting(self) -> int:
        """Return how many writes wait for a deletion to end."""
        return self._waiting

    def _lock(self, owner_id: int) -> asyncio.Lock:
        """Return the lock a deletion of the owner holds."""
        return self._locks.setdefault(owner_id, asyncio.Lock())

    @contextlib.asynccontextmanager
    async def deleting(self, owner_id: int) -> AsyncIterator[None]:
        """Hold a deletion of the owner, from its start to its last word to the chat."""
        async with self._lock(owner_id):
            self._deleting[owner_id] = self._deleted.get(owner_id, 0)
            try:
                yield
            finally:
                del self._deleting[owner_id]

    async def unless_deleted(self, owner_id: int, write: Callable[[], Awaitable[T]]) -> T | None:
        """Make a write of the owner's, unless a deletion of theirs overlaps it: None then."""
        # One under way counts from its start: it may have committed before this came.
        seen = self._deleting.get(owner_id, self._deleted.get(owner_id, 0))
        lock = self._lock(owner_id)
        self._waiting += 1
        try:
            await lock.acquire()
        finally:
            self._waiting -= 1
        try:
            if self._deleted.get(owner_id, 0) != seen:
                return None
            return await write()
        finally:
            lock.release()

    async def holdings(self, owner_id: int) -> Holdings:
        """Return how much is kept for the owner now."""
        async with self._sessionmaker() as session:
            return await _holdings(session, owner_id)

    async def erase(self, owner_id: int) -> Erased:
        """Delete everything kept for the owner, all or nothing; then their cached files."""
        async with self._sessionmaker.begin() as session:
            held = await _holdings(session, owner_id)
            await erase_memories(session, owner_id)
            hashes = await _erase_conversations(session, owner_id)
            await _erase_reminders(session, owner_id)
            await session.execute(delete(WebUse).where(WebUse.owner_id == owner_id))
        # Counted once committed: a write that waited for this deletion is not made after it.
        self._deleted[owner_id] = self._deleted.get(owner_id, 0) + 1
        # Only once the rows are gone: the cache is a copy, fetched again if another chat
        # sent the same bytes and needs them.
        return Erased(held, await self._cache.discard(hashes))
