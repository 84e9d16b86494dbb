"""Conversations and their turns, stored as they happen."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.models import Conversation, Turn
from memory.block import render_memory_block
from memory.models import utcnow
from memory.store import MemoryStore
from memory.tokens import count_tokens

# After a crash, messages younger than this are answered on restart; older ones would surprise.
RECOVERY_WINDOW = timedelta(minutes=15)


class DuplicateUpdate(Exception):
    """This Telegram update was stored before: it is being or has been answered."""


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
    tokens: int = 0
    update_id: int | None = None


def content_tokens(content: list[dict[str, Any]]) -> int:
    """Count the tokens of a turn's text, tool calls and tool results."""
    parts = []
    for block in content:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_use":
            parts.append(f"{block.get('name')} {block.get('input')}")
        elif block.get("type") == "tool_result":
            parts.append(str(block.get("content", "")))
    return count_tokens("\n".join(parts))


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
        block = await self._render_block(owner_id)
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

    async def append(
        self,
        conversation_id: int,
        role: str,
        content: list[dict[str, Any]],
        update_id: int | None = None,
    ) -> int:
        """Store one turn and mark the conversation active; return the turn id."""
        now = self._clock()
        turn = Turn(
            conversation_id=conversation_id,
            role=role,
            content=content,
            tokens=content_tokens(content),
            update_id=update_id,
            created_at=now,
        )
        try:
            async with self._sessionmaker.begin() as session:
                session.add(turn)
                await session.execute(
                    update(Conversation)
                    .where(Conversation.id == conversation_id)
                    .values(last_activity_at=now)
                )
        except IntegrityError:
            if update_id is not None and await self._update_seen(update_id):
                raise DuplicateUpdate(update_id) from None
            raise
        return turn.id

    async def _update_seen(self, update_id: int) -> bool:
        """Tell whether a turn from this Telegram update exists."""
        async with self._sessionmaker() as session:
            found = await session.scalar(select(Turn.id).where(Turn.update_id == update_id))
            return found is not None

    async def turns(self, conversation_id: int) -> list[StoredTurn]:
        """Return the turns not yet folded into the summary, in the order they happened."""
        through = self._summary_through(conversation_id)
        async with self._sessionmaker() as session:
            rows = await session.scalars(
                select(Turn)
                .where(Turn.conversation_id == conversation_id, Turn.id > through)
                .order_by(Turn.id)
            )
            return [
                StoredTurn(
                    id=t.id, role=t.role, content=t.content, tokens=t.tokens, update_id=t.update_id
                )
                for t in rows
            ]

    async def history_tokens(self, conversation_id: int) -> int:
        """Return the tokens of the turns not yet folded into the summary."""
        async with self._sessionmaker() as session:
            total = await session.scalar(
                select(func.coalesce(func.sum(Turn.tokens), 0)).where(
                    Turn.conversation_id == conversation_id,
                    Turn.id > self._summary_through(conversation_id),
                )
            )
        return int(total)

    @staticmethod
    def _summary_through(conversation_id: int):
        """Return a subquery for the last turn id folded into the summary (0 if none)."""
        return (
            select(func.coalesce(Conversation.summary_through_turn_id, 0))
            .where(Conversation.id == conversation_id)
            .scalar_subquery()
        )

    async def compact(
        self, conversation_id: int, summary: str | None, through_turn_id: int
    ) -> None:
        """Fold the turns up to through_turn_id into the summary (None keeps the old one)."""
        values: dict[str, Any] = {"summary_through_turn_id": through_turn_id}
        if summary is not None:
            values["summary"] = summary
        async with self._sessionmaker.begin() as session:
            await session.execute(
                update(Conversation).where(Conversation.id == conversation_id).values(**values)
            )

    async def get(self, conversation_id: int) -> ConversationState:
        """Return a conversation as it is stored now."""
        async with self._sessionmaker() as session:
            return _state(await session.get_one(Conversation, conversation_id))

    async def unanswered(self) -> list[ConversationState]:
        """Return open conversations whose newest turn is a user's message still unanswered."""
        newest = (
            select(Turn.conversation_id, func.max(Turn.id).label("turn_id"))
            .group_by(Turn.conversation_id)
            .subquery()
        )
        query = (
            select(Conversation)
            .join(newest, newest.c.conversation_id == Conversation.id)
            .join(Turn, Turn.id == newest.c.turn_id)
            .where(
                Conversation.ended_at.is_(None),
                Turn.role == "user",
                Conversation.last_activity_at >= self._clock() - RECOVERY_WINDOW,
            )
            .order_by(Conversation.id)
        )
        async with self._sessionmaker() as session:
            return [_state(c) for c in await session.scalars(query)]

    async def refresh_memory_block(self, owner_id: int) -> None:
        """Re-render the block of the owner's open conversations after a direct memory change."""
        block = await self._render_block(owner_id)
        async with self._sessionmaker.begin() as session:
            await session.execute(
                update(Conversation)
                .where(Conversation.owner_id == owner_id, Conversation.ended_at.is_(None))
                .values(memory_block=block)
            )

    async def _render_block(self, owner_id: int) -> str:
        """Render the owner's memory block, or "" when the owner turned memory off."""
        if not await self._memories.memory_enabled(owner_id):
            return ""
        return render_memory_block(await self._memories.list_active(owner_id))

    @staticmethod
    async def _open(session: AsyncSession, chat_id: int) -> Conversation | None:
        """Return the chat's open conversation, if any."""
        return await session.scalar(
            select(Conversation)
            .where(Conversation.chat_id == chat_id, Conversation.ended_at.is_(None))
            .order_by(Conversation.id.desc())
            .limit(1)
        )
