"""Retention: delete conversations quiet since before a cutoff, in batches, each owner alone.

A batch is one transaction, so no chat waits long on it. When a batch fails on a row (one
owner's bad data), its conversations are deleted one by one: the one that fails is logged with
its owner and left for the next run, and every other owner's old conversations still go.
"""

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, delete, select
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.models import Conversation, Turn

logger = logging.getLogger(__name__)

# Conversations deleted per transaction: other chats wait at most that long.
FORGET_BATCH = 200


def _row_error(error: DBAPIError) -> bool:
    """Tell whether a database error is about the rows (not the database being away)."""
    away = isinstance(error, OperationalError | InterfaceError) or error.connection_invalidated
    return not away


async def _delete(session: AsyncSession, ids: list[int]) -> int:
    """Delete conversations with their turns inside a session; return how many."""
    # Turns first, so every index (and its triggers) sees each one go.
    await session.execute(delete(Turn).where(Turn.conversation_id.in_(ids)))
    await session.execute(delete(Conversation).where(Conversation.id.in_(ids)))
    return len(ids)


async def forget_quiet(sessionmaker: async_sessionmaker[AsyncSession], cutoff: datetime) -> int:
    """Delete the conversations quiet since before cutoff, with their turns; return how many."""
    deleted, stuck = 0, set[int]()
    while True:
        old = select(Conversation.id, Conversation.owner_id).where(
            Conversation.last_activity_at < cutoff, Conversation.id.not_in(stuck)
        )
        batch: Sequence[Row[*tuple[Any, ...]]] = ()
        try:
            async with sessionmaker.begin() as session:
                batch = (await session.execute(old.limit(FORGET_BATCH))).all()
                if not batch:
                    return deleted
                deleted += await _delete(session, [row.id for row in batch])
            continue
        except DBAPIError as error:
            if not batch or not _row_error(error):
                raise
        for row in batch:
            deleted += await _forget_one(sessionmaker, row.id, row.owner_id, cutoff, stuck)


async def _forget_one(
    sessionmaker: async_sessionmaker[AsyncSession],
    conversation_id: int,
    owner_id: int,
    cutoff: datetime,
    stuck: set[int],
) -> int:
    """Delete one conversation if still quiet; log and skip it when its rows refuse."""
    try:
        async with sessionmaker.begin() as session:
            still = await session.scalar(
                select(Conversation.id).where(
                    Conversation.id == conversation_id, Conversation.last_activity_at < cutoff
                )
            )
            return await _delete(session, [conversation_id]) if still is not None else 0
    except DBAPIError as error:
        if not _row_error(error):
            raise
        logger.warning(
            "could not delete conversation %s of owner %s (%s); the others go on",
            conversation_id,
            owner_id,
            type(error).__name__,
        )
        stuck.add(conversation_id)
        return 0
