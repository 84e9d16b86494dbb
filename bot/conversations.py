"""Conversations and their turns, stored as they happen."""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Insert, Select, Update, bindparam, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.models import Conversation, Turn
from bot.prompt import block_text
from memory.block_cache import owner_block
from memory.models import utcnow
from memory.store import load_memory_enabled, memory_enabled_expression
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
    return count_tokens("\n".join(block_text(block) for block in content))


@dataclass(frozen=True)
class Snapshot:
    """A conversation as the agent answers it: its state, unsummarised turns and memory switch."""

    conversation: ConversationState
    turns: list[StoredTurn]
    memory_on: bool

    @property
    def unanswered(self) -> bool:
        """Tell whether the newest turn is the user's, still waiting for the model."""
        return bool(self.turns) and self.turns[-1].role == "user"


# Plain columns, not ORM objects: a turn reads and writes these on every message.
_STATE_COLUMNS = (
    Conversation.id,
    Conversation.chat_id,
    Conversation.owner_id,
    Conversation.memory_block,
    Conversation.summary,
)
_TURN_COLUMNS = (Turn.id, Turn.role, Turn.content, Turn.tokens, Turn.update_id)


# The statements every message runs are built once; building them took as long as running one.
@functools.cache
def _continue_statement() -> Update:
    """Mark the chat's open, not yet idle conversation active; return it and the memory switch."""
    return (
        update(Conversation)
        .where(
            Conversation.chat_id == bindparam("chat"),
            Conversation.ended_at.is_(None),
            Conversation.last_activity_at >= bindparam("idle_since"),
        )
        .values(last_activity_at=bindparam("now"))
        # The owner as a parameter: SQLite's RETURNING leaves a correlated column unqualified.
        .returning(*_STATE_COLUMNS, memory_enabled_expression(bindparam("owner")))
    )


@functools.cache
def _end_open_statement() -> Update:
    """End the chat's open conversations."""
    return (
        update(Conversation)
        .where(Conversation.chat_id == bindparam("chat"), Conversation.ended_at.is_(None))
        .values(ended_at=bindparam("now"))
    )


@functools.cache
def _insert_conversation_statement() -> Insert:
    """Insert a conversation and return its id."""
    return insert(Conversation).returning(Conversation.id)


@functools.cache
def _turns_statement() -> Select:
    """Select a conversation's turns not yet folded into its summary, oldest first."""
    summary_through = (
        select(func.coalesce(Conversation.summary_through_turn_id, 0))
        .where(Conversation.id == bindparam("conversation_id"))
        .scalar_subquery()
    )
    return (
        select(*_TURN_COLUMNS)
        .where(Turn.conversation_id == bindparam("conversation_id"), Turn.id > summary_through)
        .order_by(Turn.id)
    )


@functools.cache
def _insert_turn_statement() -> Insert:
    """Insert a turn and return its id."""
    return insert(Turn).returning(Turn.id)


async def _insert_returning_id(session: AsyncSession, statement: Insert, **values: Any) -> int:
    """Run an INSERT ... RETURNING id on the session's connection; return the new row's id."""
    connection = await session.connection()
    return (await connection.execute(statement, values)).scalar_one()


async def _memory_block(session: AsyncSession, owner_id: int, memory_on: bool) -> str:
    """Render the owner's memory block, or "" when the owner turned memory off."""
    return await owner_block(session, owner_id) if memory_on else ""


class ConversationStore:
    """Opens, continues and ends conversations, and keeps their turns."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        idle_timeout: timedelta,
        clock: Callable[[], datetime] = utcnow,
    ):
        self._sessionmaker = sessionmaker
        self._idle_timeout = idle_timeout
        self._clock = clock

    async def store_user_message(
        self,
        chat_id: int,
        owner_id: int,
        content: list[dict[str, Any]],
        update_id: int | None = None,
    ) -> Snapshot:
        """Store a message in the chat's open conversation, or a new one if none or idle too long.

        One transaction: the message is stored with its conversation or not at all.
        Raises DuplicateUpdate when this update was stored before (a redelivery).
        """
        now = self._clock()
        tokens = content_tokens(content)  # before the transaction: SQLite's lock is short
        try:
            async with self._sessionmaker.begin() as session:
                connection = await session.connection()
                # A write first takes SQLite's write lock at once, so no read has to upgrade.
                continued = (
                    await connection.execute(
                        _continue_statement(),
                        {
                            "chat": chat_id,
                            "owner": owner_id,
                            "idle_since": now - self._idle_timeout,
                            "now": now,
                        },
                    )
                ).all()
                if continued:
                    *state, memory_on = max(continued, key=lambda row: row.id)
                    conversation = ConversationState(*state)
                    turns = await self._load_turns(session, conversation.id)
                else:
                    memory_on = await load_memory_enabled(session, owner_id)
                    conversation = await self._start(session, chat_id, owner_id, memory_on, now)
                    turns = []
                turns.append(
                    await self._insert_turn(
                        session, conversation.id, "user", content, tokens, update_id, now
                    )
                )
        except IntegrityError:
            if update_id is not None and await self._update_seen(update_id):
                raise DuplicateUpdate(update_id) from None
            raise
        return Snapshot(conversation, turns, memory_on)

    async def _start(
        self, session: AsyncSession, chat_id: int, owner_id: int, memory_on: bool, now: datetime
    ) -> ConversationState:
        """End the chat's idle conversation and start one with the owner's memory block."""
        connection = await session.connection()
        await connection.execute(_end_open_statement(), {"chat": chat_id, "now": now})
        block = await _memory_block(session, owner_id, memory_on)
        conversation_id = await _insert_returning_id(
            session,
            _insert_conversation_statement(),
            chat_id=chat_id,
            owner_id=owner_id,
            memory_block=block,
            started_at=now,
            last_activity_at=now,
        )
        return ConversationState(conversation_id, chat_id, owner_id, block, None)

    async def snapshot(self, conversation_id: int) -> Snapshot:
        """Return a conversation as stored now: its state, its turns and the memory switch."""
        query = select(*_STATE_COLUMNS, memory_enabled_expression(Conversation.owner_id)).where(
            Conversation.id == conversation_id
        )
        async with self._sessionmaker() as session:
            *state, memory_on = (await session.execute(query)).one()
            turns = await self._load_turns(session, conversation_id)
        return Snapshot(ConversationState(*state), turns, memory_on)

    async def end(self, chat_id: int) -> bool:
        """End the chat's open conversation; tell whether there was one."""
        async with self._sessionmaker.begin() as session:
            connection = await session.connection()
            result = await connection.execute(
                _end_open_statement(), {"chat": chat_id, "now": self._clock()}
            )
            return result.rowcount > 0

    async def append(
        self, conversation_id: int, role: str, content: list[dict[str, Any]]
    ) -> StoredTurn:
        """Store one turn of the model's side of the exchange and return it."""
        tokens = content_tokens(content)
        async with self._sessionmaker.begin() as session:
            return await self._insert_turn(
                session, conversation_id, role, content, tokens, None, self._clock()
            )

    @staticmethod
    async def _insert_turn(
        session: AsyncSession,
        conversation_id: int,
        role: str,
        content: list[dict[str, Any]],
        tokens: int,
        update_id: int | None,
        now: datetime,
    ) -> StoredTurn:
        """Insert one turn with its token count and return it."""
        turn_id = await _insert_returning_id(
            session,
            _insert_turn_statement(),
            conversation_id=conversation_id,
            role=role,
            content=content,
            tokens=tokens,
            update_id=update_id,
            created_at=now,
        )
        return StoredTurn(turn_id, role, content, tokens, update_id)

    async def _update_seen(self, update_id: int) -> bool:
        """Tell whether a turn from this Telegram update exists."""
        async with self._sessionmaker() as session:
            found = await session.scalar(select(Turn.id).where(Turn.update_id == update_id))
            return found is not None

    @staticmethod
    async def _load_turns(session: AsyncSession, conversation_id: int) -> list[StoredTurn]:
        """Load the turns not yet folded into the summary, inside the caller's session."""
        connection = await session.connection()
        rows = await connection.execute(_turns_statement(), {"conversation_id": conversation_id})
        return [StoredTurn(*row) for row in rows]

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

    async def unanswered(self) -> list[ConversationState]:
        """Return open conversations whose newest turn is a user's message still unanswered."""
        newest = (
            select(Turn.conversation_id, func.max(Turn.id).label("turn_id"))
            .group_by(Turn.conversation_id)
            .subquery()
        )
        query = (
            select(*_STATE_COLUMNS)
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
            return [ConversationState(*row) for row in await session.execute(query)]

    async def refresh_memory_block(self, owner_id: int) -> None:
        """Re-render the block of the owner's open conversations after a direct memory change."""
        async with self._sessionmaker.begin() as session:
            memory_on = await load_memory_enabled(session, owner_id)
            block = await _memory_block(session, owner_id, memory_on)
            await session.execute(
                update(Conversation)
                .where(Conversation.owner_id == owner_id, Conversation.ended_at.is_(None))
                .values(memory_block=block)
            )
