"""A conversation's turns as rows: inserted with their place in the user's order, read in it.

Continuing a conversation marks it active and reads its turns, in the message's transaction.
"""

import functools
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.conversations import statements
from bot.conversations.blocks import Content, Role
from bot.conversations.content import search_text
from bot.conversations.notes import waiting_columns, waiting_for, waiting_of
from bot.conversations.order import in_user_order, order_of
from bot.conversations.snapshot import (
    ChatThread,
    ConversationState,
    MemoryWrite,
    MessageRef,
    Snapshot,
    StoredTurn,
)
from bot.conversations.web_uses import web_day_columns, web_day_of


async def load_turns(connection: AsyncConnection, conversation_id: int) -> list[StoredTurn]:
    """Load the turns not yet folded into the summary."""
    rows = await connection.execute(
        statements.turns_statement(), {"conversation_id": conversation_id}
    )
    return in_user_order([statements.turn_of(row) for row in rows])


async def continue_conversation(
    connection: AsyncConnection,
    place: ChatThread,
    owner_id: int,
    now: datetime,
    idle_timeout: timedelta,
    web_day: date | None = None,
) -> Snapshot | None:
    """Mark the topic's open conversation active and load it, or None if none or idle."""
    # A write first takes SQLite's write lock at once, so no read has to upgrade.
    parameters = {
        "chat": place.chat_id,
        "thread": place.thread_id,
        "owner": owner_id,
        "idle_since": now - idle_timeout,
        "now": now,
    }
    continued = (await connection.execute(statements.continue_statement(), parameters)).all()
    if not continued:
        return None
    row = max(continued, key=lambda row: row.id)
    conversation, memory_on = statements.state_of(row), row._mapping[statements.MEMORY_ON]
    return await load_snapshot(connection, conversation, memory_on, web_day)


async def load_snapshot(
    connection: AsyncConnection,
    conversation: ConversationState,
    memory_on: bool,
    web_day: date | None = None,
) -> Snapshot:
    """Load a conversation's turns, and whether notes or memory questions wait for its reply.

    One read for both while the conversation has turns to load; a second when it has none.
    With web_day, the owner's web uses of that day come along in the first (Snapshot.web).
    """
    parameters: dict[str, object] = {
        "conversation_id": conversation.id,
        "owner": conversation.owner_id,
        "day": web_day,
    }
    statement = _turns_and_waiting_statement(web=web_day is not None)
    rows = (await connection.execute(statement, parameters)).all()
    if not rows:
        waiting = await waiting_for(connection, conversation.owner_id, conversation.id)
        return Snapshot(conversation, [], memory_on, waiting)
    turns = in_user_order([statements.turn_of(row) for row in rows])
    web = web_day_of(rows[0], web_day) if web_day is not None else None
    return Snapshot(conversation, turns, memory_on, waiting_of(rows[0]), web)


@functools.cache
def _turns_and_waiting_statement(web: bool) -> Select[Any]:
    """Select a conversation's turns (statements.turns_statement), each with the waiting flags.

    With web, each also with the owner's web uses of :day and their zone.
    """
    statement = statements.turns_statement().add_columns(*waiting_columns())
    return statement.add_columns(*web_day_columns()) if web else statement


async def insert_turn(
    connection: AsyncConnection,
    conversation: ConversationState,
    role: Role,
    content: Content,
    tokens: int,
    ref: MessageRef,
    now: datetime,
    writes: Sequence[MemoryWrite] = (),
    inherit: str = "newest",
) -> StoredTurn:
    """Insert one turn with its token count, search text and memory writes; return it.

    A user's message takes its place in the user's order; any other turn inherits one
    (statements.insert_turn_statement): the newest exchange's, or one after the latest.
    """
    order = order_of(ref)
    values = {
        "conversation_id": conversation.id,
        "role": role,
        "content": content,
        "tokens": tokens,
        # The index keeps itself in step (a trigger, or a generated column).
        "search_text": search_text(role, content, conversation.owner_id, ref.said_by, now),
        "owner_id": conversation.owner_id,
        "update_id": ref.update_id,
        "message_key": ref.message_key,
        "sender_id": ref.sender_id,
        "said_by": ref.said_by.stored() if ref.said_by else None,
        "memory_writes": list(writes) or None,
        "created_at": now,
    }
    if order is None:
        values["conversation"] = conversation.id
        statement = statements.insert_turn_statement(inherit)
    else:
        values["user_order"] = order
        statement = statements.insert_turn_statement()
    turn_id = (await connection.execute(statement, values)).scalar_one()
    return StoredTurn(turn_id, role, content, tokens, tuple(writes), ref.said_by)
