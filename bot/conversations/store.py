"""Conversations and their turns, stored as they happen."""

from collections.abc import Awaitable, Callable, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, func, literal, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations import statements
from bot.conversations.blocks import Content, Role, text_block
from bot.conversations.content import content_tokens, search_text
from bot.conversations.leases import check_fence
from bot.conversations.models import Conversation, Turn
from bot.conversations.retention import forget_quiet
from bot.conversations.said_by import SaidBy
from bot.conversations.snapshot import (
    NOTHING_WAITING,
    ChatThread,
    ConversationState,
    DuplicateUpdate,
    MemoryWrite,
    MessageRef,
    Snapshot,
    StoredTurn,
    Unanswered,
)
from bot.conversations.turn_rows import continue_conversation, insert_turn, load_turns
from memory.budget import DEFAULT_TOKEN_BUDGET
from memory.db import affected
from memory.models import utcnow
from memory.owners import move_owner
from memory.search_terms import owner_mark
from memory.stored_block import owner_block
from memory.switch import load_memory_enabled, memory_enabled_expression

NO_REF = MessageRef()
# After a crash, messages younger than this are answered on restart; older ones would surprise.
RECOVERY_WINDOW = timedelta(minutes=15)


async def _memory_block(session: AsyncSession, owner_id: int, memory_on: bool, budget: int) -> str:
    """Render the owner's memory block, or "" when the owner turned memory off."""
    return (await owner_block(session, owner_id, budget)).text if memory_on else ""


def _remarked(old_id: int, new_id: int) -> ColumnElement[str]:
    """Return SQL for a turn's search text with every word marked as the new owner's."""
    # Each word starts with the mark and words are separated by single spaces.
    spaced = literal(" ") + Turn.search_text
    return func.substr(func.replace(spaced, f" {owner_mark(old_id)}", f" {owner_mark(new_id)}"), 2)


class ConversationStore:
    """Opens, continues and ends conversations, and keeps their turns."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        idle_timeout: timedelta,
        clock: Callable[[], datetime] = utcnow,
        block_budget: int = DEFAULT_TOKEN_BUDGET,
    ):
        self._sessionmaker = sessionmaker
        self._idle_timeout = idle_timeout
        self._clock = clock
        self._block_budget = block_budget
        # Called after each turn is stored (search by meaning embeds it in the background),
        # and with a turn's id after its words changed (its vector is made again).
        self.stored: Callable[[], None] = lambda: None
        self.changed: Callable[[int], None] = lambda turn_id: None
        # Awaited at shutdown: background work on the turns (the vectors' fill) stops.
        self.closing: list[Callable[[], Awaitable[None]]] = []

    @property
    def sessionmaker(self) -> async_sessionmaker[AsyncSession]:
        """Return the sessions' maker (searches and vectors read the same database)."""
        return self._sessionmaker

    async def store_user_message(
        self,
        place: ChatThread,
        owner_id: int,
        content: Content,
        ref: MessageRef = NO_REF,
        web_day: date | None = None,
    ) -> Snapshot:
        """Store a message in the topic's open conversation, or a new one if none or idle.

        One transaction: the message is stored with its conversation or not at all.
        Raises DuplicateUpdate when this message was stored before (a redelivery).
        """
        now = self._clock()
        tokens = content_tokens(content)  # before the transaction: SQLite's lock is short
        try:
            async with self._sessionmaker.begin() as session:
                connection = await session.connection()
                snapshot = await continue_conversation(
                    connection, place, owner_id, now, self._idle_timeout, web_day
                )
                if snapshot is None:
                    snapshot = await self._start(session, place, owner_id, now)
                turn = await insert_turn(
                    connection,
                    snapshot.conversation,
                    "user",
                    content,
                    tokens,
                    ref,
                    now,
                    inherit="latest",
                )
                snapshot.turns.append(turn)
        except IntegrityError:
            if ref.message_key is not None and await self.message_seen(ref.message_key):
                raise DuplicateUpdate(ref.message_key) from None
            raise
        self.stored()
        return snapshot

    async def store_bot_message(
        self, place: ChatThread, owner_id: int, note: str, text: str
    ) -> Snapshot:
        """Store words the bot said first (a fired reminder): a note, then them, as one step.

        The note takes the user's side, so the history still starts with a user turn and a
        later reply to the bot's words follows an assistant turn, as the API requires.
        """
        now = self._clock()
        async with self._sessionmaker.begin() as session:
            connection = await session.connection()
            snapshot = await continue_conversation(
                connection, place, owner_id, now, self._idle_timeout
            )
            if snapshot is None:
                snapshot = await self._start(session, place, owner_id, now)
            said: tuple[tuple[Role, str], ...] = (("user", note), ("assistant", text))
            for role, words in said:
                content: Content = [text_block(words)]
                turn = await insert_turn(
                    connection,
                    snapshot.conversation,
                    role,
                    content,
                    content_tokens(content),
                    NO_REF,
                    now,
                    inherit="latest" if role == "user" else "newest",
                )
                snapshot.turns.append(turn)
        self.stored()
        return snapshot

    async def _start(
        self, session: AsyncSession, place: ChatThread, owner_id: int, now: datetime
    ) -> Snapshot:
        """End the topic's idle conversation and start one with the owner's memory block."""
        connection = await session.connection()
        await connection.execute(
            statements.end_open_statement(),
            {"chat": place.chat_id, "thread": place.thread_id, "now": now},
        )
        memory_on = await load_memory_enabled(session, owner_id)
        block = await _memory_block(session, owner_id, memory_on, self._block_budget)
        values = {
            "chat_id": place.chat_id,
            "thread_id": place.thread_id,
            "owner_id": owner_id,
            "memory_block": block,
            "started_at": now,
            "last_activity_at": now,
        }
        result = await connection.execute(statements.insert_conversation_statement(), values)
        conversation = ConversationState(
            result.scalar_one(), place.chat_id, place.thread_id, owner_id, block, None
        )
        return Snapshot(conversation, [], memory_on, NOTHING_WAITING)

    async def snapshot(self, conversation_id: int) -> Snapshot:
        """Return a conversation as stored now: its state, its turns and the memory switch."""
        switch = memory_enabled_expression(Conversation.owner_id.expression)
        query = select(*statements.STATE_COLUMNS, switch.label(statements.MEMORY_ON)).where(
            Conversation.id == conversation_id
        )
        async with self._sessionmaker() as session:
            row = (await session.execute(query)).one()
            turns = await load_turns(await session.connection(), conversation_id)
        return Snapshot(statements.state_of(row), turns, row._mapping[statements.MEMORY_ON])

    async def end(self, place: ChatThread) -> bool:
        """End the topic's open conversation; tell whether there was one."""
        parameters = {"chat": place.chat_id, "thread": place.thread_id, "now": self._clock()}
        async with self._sessionmaker.begin() as session:
            connection = await session.connection()
            result = await connection.execute(statements.end_open_statement(), parameters)
            return affected(result) > 0

    async def append(
        self,
        conversation: ConversationState,
        role: Role,
        content: Content,
        writes: Sequence[MemoryWrite] = (),
    ) -> StoredTurn:
        """Store one turn of the model's side of the exchange (with its writes); return it.

        Raises LeaseLost when the turn is fenced (leases.FENCE) and another process took the
        chat's turn over: nothing is stored.
        """
        tokens, now = content_tokens(content), self._clock()
        async with self._sessionmaker.begin() as session:
            connection = await session.connection()
            await check_fence(connection, conversation.chat_id)
            turn = await insert_turn(
                connection, conversation, role, content, tokens, NO_REF, now, writes
            )
        self.stored()
        return turn

    async def replace_content(self, turn_id: int, content: Content) -> StoredTurn:
        """Rewrite a turn's content (a refused file becomes a note), its words and vector too."""
        tokens = content_tokens(content)
        async with self._sessionmaker.begin() as session:
            changed = (
                update(Turn)
                .where(Turn.id == turn_id)
                .values(content=content, tokens=tokens, embedding=None, embedding_model=None)
                .returning(
                    Turn.role, Turn.memory_writes, Turn.owner_id, Turn.said_by, Turn.created_at
                )
            )
            row = (await session.execute(changed)).first()
            if row is not None and row.owner_id is not None:
                said_by = SaidBy.of_stored(row.said_by) if row.said_by else None
                words = search_text(row.role, content, row.owner_id, said_by, row.created_at)
                await session.execute(
                    update(Turn).where(Turn.id == turn_id).values(search_text=words)
                )
        if row is None:
            raise LookupError(f"no turn {turn_id}")
        self.changed(turn_id)
        return StoredTurn(turn_id, row.role, content, tokens, tuple(row.memory_writes or ()))

    async def close(self) -> None:
        """Stop the background work on the turns (at shutdown)."""
        for close in self.closing:
            await close()

    async def message_seen(self, message_key: str) -> bool:
        """Tell whether a turn from this Telegram message exists."""
        async with self._sessionmaker() as session:
            found = await session.scalar(select(Turn.id).where(Turn.message_key == message_key))
            return found is not None

    async def compact(
        self, conversation_id: int, summary: str | None, through: int, changes: Sequence[str]
    ) -> None:
        """Fold turns up to through into the summary (None keeps its prose) and its changes.

        Raises LeaseLost when the turn is fenced and another process took it over.
        """
        values: dict[str, Any] = {"summary_through_turn_id": through}
        values["summary_changes"] = list(changes) or None  # the whole list, earlier ones too
        if summary is not None:
            values["summary"] = summary
        async with self._sessionmaker.begin() as session:
            connection = await session.connection()
            folded = update(Conversation).where(Conversation.id == conversation_id)
            chat_id = await connection.scalar(
                folded.values(**values).returning(Conversation.chat_id)
            )
            if chat_id is not None:  # in the same transaction: a turn taken over folds nothing
                await check_fence(connection, chat_id)

    async def unanswered(self) -> list[Unanswered]:
        """Return open conversations whose newest turn is a user's message, with its sender."""
        newest = (
            select(Turn.conversation_id, func.max(Turn.id).label("turn_id"))
            .group_by(Turn.conversation_id)
            .subquery()
        )
        query = (
            select(*statements.STATE_COLUMNS, Turn.sender_id)
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
            rows = await session.execute(query)
            return [Unanswered(statements.state_of(row), row.sender_id) for row in rows]

    async def move_chat(self, old_chat_id: int, new_chat_id: int) -> int:
        """Move a group's conversations and memories to its new id, once; return memories moved.

        Telegram gives an upgraded group a new id and sends the news to both ids; whichever
        arrives first moves everything, the other finds nothing left. A conversation already
        open under the new id stays the open one.
        """
        now = self._clock()
        async with self._sessionmaker.begin() as session:
            moved = await move_owner(session, old_chat_id, new_chat_id)
            await session.execute(
                update(Turn)
                .where(
                    Turn.conversation_id.in_(
                        select(Conversation.id).where(Conversation.chat_id == old_chat_id)
                    ),
                )
                .values(search_text=_remarked(old_chat_id, new_chat_id), owner_id=new_chat_id)
            )
            already_open = await session.scalar(
                select(Conversation.id).where(
                    Conversation.chat_id == new_chat_id, Conversation.ended_at.is_(None)
                )
            )
            values: dict[str, Any] = {"chat_id": new_chat_id, "owner_id": new_chat_id}
            if already_open is not None:
                values["ended_at"] = func.coalesce(Conversation.ended_at, now)
            await session.execute(
                update(Conversation).where(Conversation.chat_id == old_chat_id).values(**values)
            )
        return moved

    async def forget_before(self, cutoff: datetime) -> int:
        """Delete conversations quiet since before cutoff, with their turns; return how many.

        Memories are never touched: they belong to the owner, not to a conversation. A
        conversation the next message would still continue (quiet for less than the idle
        time) is never deleted, and deletion goes in batches, so no chat waits long on it.
        """
        cutoff = min(cutoff, self._clock() - self._idle_timeout)
        return await forget_quiet(self._sessionmaker, cutoff)

    async def refresh_memory_block(self, owner_id: int) -> None:
        """Re-render the block of the owner's open conversations after a direct memory change."""
        async with self._sessionmaker.begin() as session:
            memory_on = await load_memory_enabled(session, owner_id)
            block = await _memory_block(session, owner_id, memory_on, self._block_budget)
            await session.execute(
                update(Conversation)
                .where(Conversation.owner_id == owner_id, Conversation.ended_at.is_(None))
                .values(memory_block=block)
            )
