"""The check a turn's tool writes pass first, in their own transaction, set by the turn above.

The layer that answers turns sets it while the model's tool calls run (the lease fence in
bot.conversations.leases): a write then raises instead of committing once the turn is no
longer this process's. Outside a tool call (a command, a button, a job) it is unset.
"""

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker

WriteCheck = Callable[[AsyncConnection], Awaitable[None]]

WRITE_CHECK: ContextVar[WriteCheck | None] = ContextVar("write_check", default=None)


@contextlib.asynccontextmanager
async def checked_write(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    """Begin a write transaction whose first statement is the write check in force, if any."""
    async with sessionmaker.begin() as session:
        if (check := WRITE_CHECK.get()) is not None:
            await check(await session.connection())  # it raises to stop the write
        yield session
