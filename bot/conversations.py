"""Conversations and their turns, stored as they happen."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.models import Conversation, Turn
from memory.block import render_memory_block
from memory.models import utcnow
from memory.store import MemoryStore


@dataclass(frozen=True)
class ConversationState:
    """What the agent needs of a conversation to build the next request."""

    id: int
    chat_id: int
    owner_id: int
    memory_block: str
    summary: str | None


@dataclass(frozen=True)
class StoredTurn:
    """One stored message of a conversation."""

    id: int
    role: str
    content: list[dict[str, Any]]


def _state(conversation: Conversation) -> ConversationState:
    """Copy the fields callers need out of the ORM row."""
    return ConversationState(
        id=conversation.id,
        chat_id=conversation.chat_id,
        owner_id=conversation.owner_id,
        memory_block=conversation.memory_block,
        summary=conversation.summary,
    )


class ConversationStore:
    """Opens, continues and ends conversations, and keeps their turns."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        memories: MemoryStore,
        idle_timeout: timedelta,
        clock: Callable[[], datetime] = utcnow,
    ):
        self._sessionmaker = sessionmaker
        self._memories = memories
        self._idle_timeout = idle_timeout
        self._clock = clock

    async def current(self, chat_id: int, owner_id: int) -> ConversationState:
        """Return the chat's open conversation, starting a new one if none or idle too long."""
        now = self._clock()
        async with self._sessionmaker.begin() as session:
            conversation = await self._open(session, chat_id)
            if (
                conversation is not None
                and now - conversation.last_activity_at <= self._idle_timeout
            ):
                return _state(conversation)
            if conversation is not None:
                conversation.ended_at = now
        block = render_memory_block(await self._memories.list_active(owner_id))
        async with self._sessionmaker.begin() as session:
            conversation = Conversation(
                chat_id=chat_id,
                owner_id=owner_id,
                memory_block=block,
                started_at=now,
                last_activity_at=now,
            )
            session.add(conversation)
            await session.flush()
            return _state(conversation)

    async def end(self, chat_id: int) -> bool:
        """End the chat's open conversation; tell whether there was one."""
        async with self._sessionmaker.begin() as session:
            result = await session.execute(
                update(Conversation)
                .where(Conversation.chat_id == chat_id, Conversation.ended_at.is_(None))
                .values(ended_at=self._clock())
            )
            return result.rowcount > 0

    async def append(self, conversation_id: int, role: str, content: list[dict[str, Any]]) -> int:
        """Store one turn and mark the conversation active; return the turn id."""
        now = self._clock()
        async with self._sessionmaker.begin() as session:
            turn = Turn(conversation_id=conversation_id, role=role, content=content, created_at=now)
            session.add(turn)
            await session.execute(
                update(Conversation)
                .where(Conversation.id == conversation_id)
                .values(last_activity_at=now)
            )
            await session.flush()
            return turn.id

    async def turns(self, conversation_id: int) -> list[StoredTurn]:
        """Return the conversation's turns in the order they happened."""
        async with self._sessionmaker() as session:
            rows = await session.scalars(
                select(Turn).where(Turn.conversation_id == conversation_id).order_by(Turn.id)
            )
            return [StoredTurn(id=t.id, role=t.role, content=t.content) for t in rows]

    async def refresh_memory_block(self, owner_id: int) -> None:
        """Re-render the block of the owner's open conversations after a direct memory change."""
        block = render_memory_block(await self._memories.list_active(owner_id))
        async with self._sessionmaker.begin() as session:
            await session.execute(
                update(Conversation)
                .where(Conversation.owner_id == owner_id, Conversation.ended_at.is_(None))
                .values(memory_block=block)
            )

    @staticmethod
    async def _open(session: AsyncSession, chat_id: int) -> Conversation | None:
        """Return the chat's open conversation, if any."""
        return await session.scalar(
            select(Conversation)
            .where(Conversation.chat_id == chat_id, Conversation.ended_at.is_(None))
            .order_by(Conversation.id.desc())
            .limit(1)
        )
