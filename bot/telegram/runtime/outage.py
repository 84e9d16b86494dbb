"""A database outage loses no message: say so once, keep the update, answer when it is back.

An update whose handling fails because the database cannot be reached (checked with a probe,
so a bug is never taken for an outage) is kept in memory, in order. Its chat is told once per
outage; once a probe succeeds the kept updates go through the chat lanes again, as if they had
just come. What cannot wait (the process stops, or the outage lasts too long) is said too.
"""

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import Update
from telegram.error import TelegramError

from bot.conversations.store import RECOVERY_WINDOW
from bot.telegram import texts
from bot.telegram.runtime.processing import AnyApplication, lanes

logger = logging.getLogger(__name__)

# What an unreachable database raises, through SQLAlchemy or straight from the driver.
DATABASE_ERRORS = (SQLAlchemyError, OSError, TimeoutError)
PROBE_TIMEOUT_SECONDS = 5.0
# Probes back off from the first to the last delay while the outage lasts.
RETRY_DELAYS = (1.0, 2.0, 4.0, 8.0, 15.0)
# A message older than this is not answered any more (as left-over turns after a crash).
GIVE_UP_SECONDS = RECOVERY_WINDOW.total_seconds()

Clock = Callable[[], float]


async def probe(engine: AsyncEngine) -> bool:
    """Tell whether the database answers a trivial query now."""
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_SECONDS), engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
    except DATABASE_ERRORS:
        return False
    return True


@dataclass
class Kept:
    """An update kept through an outage, and when it came."""

    update: Update
    since: float


@dataclass
class Outage:
    """The updates kept while the database is out, and the chats told so."""

    reachable: Callable[[], Awaitable[bool]]
    clock: Clock = time.monotonic
    delays: tuple[float, ...] = RETRY_DELAYS
    window: float = GIVE_UP_SECONDS  # how long an update is kept before it is given up
    kept: list[Kept] = field(default_factory=list)
    told: set[int] = field(default_factory=set)
    replaying: set[int] = field(default_factory=set)  # update ids sent through again
    _waiter: asyncio.Task[None] | None = None

    async def keep(self, application: AnyApplication, update: Update, error: BaseException) -> bool:
        """Keep the update if error means the database is out; tell its chat once."""
        if not isinstance(error, DATABASE_ERRORS) or await self.reachable():
            return False
        chat = update.effective_chat
        assert chat is not None  # only updates from chats reach the database
        since = self.clock()
        self.kept.append(Kept(update, since))
        logger.warning(
            "the database is unreachable (%s); keeping update %s until it is back",
            type(error).__name__,
            update.update_id,
        )
        if chat.id not in self.told:
            self.told.add(chat.id)
            await _say(application, chat.id, texts.DATABASE_DOWN)
        if self._waiter is None or self._waiter.done():
            self._waiter = asyncio.create_task(self._wait_and_replay(application))
        return True

    async def _wait_and_replay(self, application: AnyApplication) -> None:
        """Probe with back-off until the database answers, then process what was kept."""
        for attempt in range(1_000_000):
            await asyncio.sleep(self.delays[min(attempt, len(self.delays) - 1)])
            await self._give_up_old(application)
            if not self.kept:
                return
            if await self.reachable():
                break
        # In the order they came: each was kept after its own probe, which may finish out of turn.
        kept = sorted(self.kept, key=lambda item: item.update.update_id)
        self.kept, self.told = [], set()
        logger.info("the database is back: answering %d kept message(s)", len(kept))
        processor = lanes(application)
        for item in kept:
            self.replaying.add(item.update.update_id)
            application.create_task(
                processor.process_update(item.update, application.process_update(item.update)),
                update=item.update,
            )

    async def _give_up_old(self, application: AnyApplication) -> None:
        """Say to the chats of updates kept too long that they are not answered, once each."""
        now = self.clock()
        late = [k for k in self.kept if now - k.since > self.window]
        if not late:
            return
        self.kept = [k for k in self.kept if k not in late]
        waiting = {_chat_of(k) for k in self.kept}
        for chat_id in dict.fromkeys(_chat_of(k) for k in late):
            if chat_id not in waiting:
                # Its next message in this outage is kept and told about afresh.
                self.told.discard(chat_id)
            await _say(application, chat_id, texts.DATABASE_GAVE_UP)

    async def stop(self, application: AnyApplication) -> None:
        """At shutdown: say to each chat with kept messages that they were not answered."""
        if self._waiter is not None:
            self._waiter.cancel()
        chats = dict.fromkeys(_chat_of(k) for k in self.kept)
        self.kept = []
        if chats:
            logger.warning("stopping with %d chat(s) waiting for the database", len(chats))
        for chat_id in chats:
            await _say(application, chat_id, texts.DATABASE_GAVE_UP)


def _chat_of(kept: Kept) -> int:
    """Return the chat of a kept update (only updates from chats are kept)."""
    assert kept.update.effective_chat is not None
    return kept.update.effective_chat.id


async def _say(application: AnyApplication, chat_id: int, words: str) -> None:
    """Send a line to the chat; a chat that cannot be reached is only logged."""
    try:
        await application.bot.send_message(chat_id, words)
    except TelegramError as error:
        logger.warning("could not tell chat %s about the database: %s", chat_id, error)
