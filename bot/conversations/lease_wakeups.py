"""Wake a process's turn waiting for a chat as soon as another process lets the chat's lease go.

On Postgres, letting go of leases (at a turn's end, handed back at shutdown, freed from a dead
process) notifies the channel turn_leases with each chat's id in the same statement, so the
notice goes out when, and only if, that commits. Each process listens on one connection of
its pool, and a turn waiting for the chat is woken by the notice instead of asking again at
its next tick. A notice only hastens what the tick does anyway: a process that misses one
(its listening connection lost, or SQLite, which has no notices) takes the chat at the tick.
"""

import asyncio
import contextlib
import functools
import logging
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.conversations.leases import CHANNEL

logger = logging.getLogger(__name__)


@functools.cache
def listen_errors() -> tuple[type[BaseException], ...]:
    """Return the errors of a listening connection not had or lost: the ticks try again."""
    # Only Postgres listens: a bot on SQLite never loads the Postgres driver.
    import asyncpg

    return (SQLAlchemyError, OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)


class LeaseWakeups:
    """This process's listener for let-go leases, and the turns waiting for them."""

    def __init__(self, engine: AsyncEngine):
        self._engine = engine
        self._connection: AsyncConnection | None = None
        self._driver: Any = None  # the asyncpg connection listening
        self._lost = False
        self._waiting: dict[int, asyncio.Event] = {}
        self._handing_back: set[asyncio.Task[None]] = set()  # kept: the loop holds tasks weakly

    @property
    def listening(self) -> bool:
        """Tell whether notices arrive: listening, and the connection not lost."""
        return self._connection is not None and not self._lost

    def expect(self, chat_id: int) -> asyncio.Event:
        """Return an event set when the chat's lease is let go from now on."""
        event = self._waiting[chat_id] = asyncio.Event()
        return event

    def forget(self, chat_id: int) -> None:
        """Stop waiting for the chat's lease."""
        self._waiting.pop(chat_id, None)

    async def listen(self) -> bool:
        """Listen for let-go leases unless already listening (Postgres only); tell if listening."""
        if self._engine.dialect.name != "postgresql" or self.listening:
            return self.listening
        await self.close()
        try:
            self._connection = await self._engine.connect()
            self._driver = (await self._connection.get_raw_connection()).driver_connection
            await self._driver.add_listener(CHANNEL, self._notified)
            self._driver.add_termination_listener(self._terminated)
        except listen_errors() as error:
            if not self._lost:  # once per outage: the ticks try again
                logger.info("not woken by let-go turn leases yet (ticks instead): %s", error)
            self._lost = True
            return False
        self._lost = False
        # A lease let go while nobody listened: every waiting turn asks once more now.
        for event in self._waiting.values():
            event.set()
        return True

    def _notified(self, connection: object, pid: int, channel: str, payload: str) -> None:
        """Wake the turn waiting for the chat named in a notice, if any."""
        try:
            chat_id = int(payload)
        except ValueError:
            return  # not ours: anyone on the database may notify the channel
        event = self._waiting.get(chat_id)
        if event is not None:
            event.set()

    def _terminated(self, connection: object) -> None:
        """Note that the listening connection is gone: the next tick listens again."""
        if connection is self._driver:
            self._lost = True

    async def close(self) -> None:
        """Stop listening and hand the connection back (dropped if it cannot be cleaned)."""
        connection, self._connection = self._connection, None
        driver, self._driver = self._driver, None
        if connection is None:
            return
        # Shielded: a caller cut off (a shutdown's grace period, a cancelled tick) must not
        # leave the connection checked out, for the garbage collector to terminate.
        handing_back = asyncio.create_task(self._hand_back(connection, driver, self._lost))
        self._handing_back.add(handing_back)
        handing_back.add_done_callback(self._handing_back.discard)
        await asyncio.shield(handing_back)

    async def _hand_back(self, connection: AsyncConnection, driver: Any, lost: bool) -> None:
        """Stop listening on the connection and return it to the pool, or drop it if broken."""
        try:
            if not lost and driver is not None:
                driver.remove_termination_listener(self._terminated)
                await driver.remove_listener(CHANNEL, self._notified)
                await connection.close()
                return
        except listen_errors() as error:
            logger.info("could not stop listening cleanly: %s", error)
        # Dropped, not pooled: it may still be listening, or be broken.
        with contextlib.suppress(*listen_errors()):
            await connection.invalidate()
            await connection.close()
