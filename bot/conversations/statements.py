"""The statements every message runs, built once: building them took as long as running one."""

import functools
from typing import Any, Protocol

from sqlalchemy import (
    Insert,
    ScalarSelect,
    Select,
    Update,
    bindparam,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.engine import RowMapping
from sqlalchemy.orm import aliased

from bot.conversations.blocks import Content
from bot.conversations.models import Conversation, Turn, TurnLease
from bot.conversations.said_by import SaidBy
from bot.conversations.snapshot import ConversationState, MemoryWrite, StoredTurn
from memory.switch import memory_enabled_expression

# Plain columns, not ORM objects: a turn reads and writes these on every message.
STATE_COLUMNS = (
    Conversation.id,
    Conversation.chat_id,
    Conversation.thread_id,
    Conversation.owner_id,
    Conversation.memory_block,
    Conversation.summary,
    Conversation.summary_changes,
)
TURN_COLUMNS = (Turn.id, Turn.role, Turn.content, Turn.tokens, Turn.memory_writes, Turn.said_by)
MEMORY_ON = "memory_on"


class NamedRow(Protocol):
    """A result row read by column name (SQLAlchemy's Row, whatever its column types)."""

    @property
    def _mapping(self) -> RowMapping: ...


def state_of(row: NamedRow) -> ConversationState:
    """Read a conversation's state from a row by column name, never by position."""
    values = row._mapping
    return ConversationState(
        id=values["id"],
        chat_id=values["chat_id"],
        thread_id=values["thread_id"],
        owner_id=values["owner_id"],
        memory_block=values["memory_block"],
        summary=values["summary"],
        summary_changes=tuple(values["summary_changes"] or ()),
    )


def turn_of(row: NamedRow) -> StoredTurn:
    """Read a stored turn from a row by column name."""
    values = row._mapping
    said_by = SaidBy.of_stored(values["said_by"]) if values["said_by"] else None
    return StoredTurn(
        id=values["id"],
        role=values["role"],
        content=values["content"],
        tokens=values["tokens"],
        memory_writes=tuple(values["memory_writes"] or ()),
        said_by=said_by,
    )


def _open_in_topic() -> Update:
    """Update the conversations still open in the chat and topic the parameters name."""
    return update(Conversation).where(
        Conversation.chat_id == bindparam("chat"),
        Conversation.thread_id.is_not_distinct_from(bindparam("thread")),
        Conversation.ended_at.is_(None),
    )


@functools.cache
def continue_statement() -> Update:
    """Mark the topic's open, not yet idle conversation active; return it and the switch."""
    return (
        _open_in_topic()
        .where(Conversation.last_activity_at >= bindparam("idle_since"))
        .values(last_activity_at=bindparam("now"))
        # The owner as a parameter: SQLite's RETURNING leaves a correlated column unqualified.
        .returning(*STATE_COLUMNS, memory_enabled_expression(bindparam("owner")).label(MEMORY_ON))
    )


@functools.cache
def end_open_statement() -> Update:
    """End the topic's open conversations."""
    return _open_in_topic().values(ended_at=bindparam("now"))


@functools.cache
def fence_statement() -> Update:
    """Touch the chat's lease if the holder still has it: a lock on its row, nothing changed."""
    return (
        update(TurnLease)
        # Not named as the columns: an UPDATE keeps those names for its SET values.
        .where(TurnLease.chat_id == bindparam("chat"), TurnLease.holder == bindparam("holding"))
        .values(expires_at=TurnLease.expires_at)
    )


@functools.cache
def insert_conversation_statement() -> Insert:
    """Insert a conversation and return its id."""
    return insert(Conversation).returning(Conversation.id)


@functools.cache
def turns_statement() -> Select[
    int, str, Content, int, list[MemoryWrite] | None, dict[str, Any] | None
]:
    """Select a conversation's turns not yet folded into its summary, in the user's order.

    The summary folds the turns up to its last one in the order they were read in: those
    stored before it and read before it. A turn stored after it is never folded.
    """
    summary_through = (
        select(func.coalesce(Conversation.summary_through_turn_id, 0))
        .where(Conversation.id == bindparam("conversation_id"))
        .scalar_subquery()
    )
    through = aliased(Turn)
    through_order = (
        select(through.user_order).where(through.id == summary_through).scalar_subquery()
    )
    return (
        select(*TURN_COLUMNS)
        .where(
            Turn.conversation_id == bindparam("conversation_id"),
            or_(Turn.id > summary_through, Turn.user_order > through_order),
        )
        .order_by(func.coalesce(Turn.user_order, 0), Turn.id)
    )


@functools.cache
def insert_turn_statement(inherit: str | None = None) -> Insert:
    """Insert a turn and return its id; with its user_order, or one it inherits."""
    statement = insert(Turn)
    if inherit is not None:
        statement = statement.values(user_order=_inherited(inherit))
    return statement.returning(Turn.id)


def _inherited(inherit: str) -> ScalarSelect[int | None]:
    """Return the user_order a turn takes from its conversation's turns ("newest" or "latest").

    The model's turns continue the exchange of the newest turn stored; words of the bot's own
    or without a message key start an exchange after the latest in the user's order.
    """
    other = aliased(Turn)
    mine = other.conversation_id == bindparam("conversation")
    if inherit == "newest":
        return (
            select(other.user_order)
            .where(mine)
            .order_by(other.id.desc())
            .limit(1)
            .scalar_subquery()
        )
    return select(func.max(other.user_order)).where(mine).scalar_subquery()
