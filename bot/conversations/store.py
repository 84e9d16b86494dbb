"""Conversations and their turns, stored as they happen."""

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker

from bot.conversations import statements
from bot.conversations.content import content_tokens
from bot.conversations.models import Conversation, Turn
from bot.conversations.snapshot import ConversationState, DuplicateUpdate, Snapshot, StoredTurn
from memory.models import utcnow
from memory.stored_block import owner_block
from memory.switch import load_memory_enabled, memory_enabled_expression

# After a crash, messages younger than this are answered on restart; older ones would surprise.
RECOVERY_WINDOW = timedelta(minutes=15)


async def _memory_block(session: AsyncSession, owner_id: int, memory_on: bool) -> str:
    """Render the owner's memory block, or "" when the owner turned memory off."""
    return await owner_block(session, owner_id) if memory_on else ""


async def _load_turns(connection: AsyncConnection, conversation_id: int) -> list[StoredTurn]:
    """Load the turns not yet folded into the summary."""
    rows = await connection.execute(
        statements.turns_statement(), {"conversation_id": conversation_id}
    )
    return [StoredTurn(*row) for row in rows]


async def _insert_turn(
    connection: AsyncConnection,
    conversation_id: int,
    role: str,
    content: list[dict[str, Any]],
    tokens: int,
    update_id: int | None,
    now: datetime,
) -> StoredTurn:
    """Insert one turn with its token count and return it."""
    values = {
        "conversation_id": conversation_id,
        "role": role,
        "content": content,
        "tokens": tokens,
        "update_id": update_id,
        "created_at": now,
    }
    turn_id = (await connection.execute(statements.insert_turn_statement(), values)).scalar_one()
    return StoredTurn(turn_id, role, content, tokens)


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
                snapshot = await self._continue(connection, chat_id, owner_id, now)
                if snapshot is None:
                    snapshot = await self._start(session, chat_id, owner_id, now)
                turn = await _insert_turn(
                    connection, snapshot.conversation.id, "user", content, tokens, update_id, now
                )
                snapshot.turns.append(turn)
        except IntegrityError:
            if update_id is not None and await self._update_seen(update_id):
                raise DuplicateUpdate(update_id) from None
            raise
        return snapshot

    async def _continue(
        self, connection: AsyncConnection, chat_id: int, owner_id: int, now: datetime
    ) -> Snapshot | None:
        """Mark the chat's open conversation active and load it, or None if none or idle."""
        # A write first takes SQLite's write lock at once, so no read has to upgrade.
        parameters = {
            "chat": chat_id,
            "owner": owner_id,
            "idle_since": now - self._idle_timeout,
            "now": now,
        }
        continued = (await connection.execute(statements.continue_statement(), parameters)).all()
        if not continued:
            return None
        *state, memory_on = max(continued, key=lambda row: row.id)
        conversation = ConversationState(*state)
        return Snapshot(conversation, await _load_turns(connection, conversation.id), memory_on)

    async def _start(
        self, session: AsyncSession, chat_id: int, owner_id: int, now: datetime
    ) -> Snapshot:
        """End the chat's idle conversation and start one with the owner's memory block."""
        connection = await session.connection()
        await connection.execute(statements.end_open_statement(), {"chat": chat_id, "now": now})
        memory_on = await load_memory_enabled(session, owner_id)
        block = await _memory_block(session, owner_id, memory_on)
        values = {
            "chat_id": chat_id,
            "owner_id": owner_id,
            "memory_block": block,
            "started_at": now,
            "last_activity_at": now,
        }
        result = await connection.execute(statements.insert_conversation_statement(), values)
        conversation = ConversationState(result.scalar_one(), chat_id, owner_id, block, None)
        return Snapshot(conversation, [], memory_on)

    async def snapshot(self, conversation_id: int) -> Snapshot:
        """Return a conversation as stored now: its state, its turns and the memory switch."""
        query = select(
            *statements.STATE_COLUMNS, memory_enabled_expression(Conversation.owner_id)
        ).where(Conversation.id == conversation_id)
        async with self._sessionmaker() as session:
            *state, memory_on = (await session.execute(query)).one()
            turns = await _load_turns(await session.connection(), conversation_id)
        return Snapshot(ConversationState(*state), turns, memory_on)

    async def end(self, chat_id: int) -> bool:
        """End the chat's open conversation; tell whether there was one."""
        async with self._sessionmaker.begin() as session:
            connection = await session.connection()
            result = await connection.execute(
                statements.end_open_statement(), {"chat": chat_id, "now": self._clock()}
            )
            return result.rowcount > 0

    async def append(
        self, conversation_id: int, role: str, content: list[dict[str, Any]]
    ) -> StoredTurn:
        """Store one turn of the model's side of the exchange and return it."""
        tokens = content_tokens(content)
        async with self._sessionmaker.begin() as session:
            return await _insert_turn(
                await session.connection(),
                conversation_id,
                role,
                content,
                tokens,
                None,
                self._clock(),
            )

    async def _update_seen(self, update_id: int) -> bool:
        """Tell whether a turn from this Telegram update exists."""
        async with self._sessionmaker() as session:
            found = await session.scalar(select(Turn.id).where(Turn.update_id == update_id))
            return found is not None

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
            select(*statements.STATE_COLUMNS)
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
