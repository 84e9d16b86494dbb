"""A conversation's turns as rows: inserted with their place in the user's order, read in it."""

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.conversations import statements
from bot.conversations.blocks import Content, Role
from bot.conversations.content import search_text
from bot.conversations.notes import waiting_columns, waiting_for, waiting_of
from bot.conversations.order import in_user_order, order_of
from bot.conversations.snapshot import (
    ConversationState,
    MemoryWrite,
    MessageRef,
    Snapshot,
    StoredTurn,
)


async def load_turns(connection: AsyncConnection, conversation_id: int) -> list[StoredTurn]:
    """Load the turns not yet folded into the summary."""
    rows = await connection.execute(
        statements.turns_statement(), {"conversation_id": conversation_id}
    )
    return in_user_order([statements.turn_of(row) for row in rows])


async def load_snapshot(
    connection: AsyncConnection, conversation: ConversationState, memory_on: bool
) -> Snapshot:
    """Load a conversation's turns, and whether notes or memory questions wait for its reply.

    One read for both while the conversation has turns to load; a second when it has none.
    """
    parameters = {"conversation_id": conversation.id, "owner": conversation.owner_id}
    rows = (await connection.execute(_turns_and_waiting_statement(), parameters)).all()
    if not rows:
        waiting = await waiting_for(connection, conversation.owner_id, conversation.id)
        return Snapshot(conversation, [], memory_on, waiting)
    turns = in_user_order([statements.turn_of(row) for row in rows])
    return Snapshot(conversation, turns, memory_on, waiting_of(rows[0]))


@functools.cache
def _turns_and_waiting_statement() -> Select[Any]:
    """Select a conversation's turns (statements.turns_statement), each with the waiting flags."""
    return statements.turns_statement().add_columns(*waiting_columns())


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
