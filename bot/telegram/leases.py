"""Hold a chat's turn lease while answering it, renew it, and answer what gone processes left.

The update processor holds the lease of an update's chat around the update (ChatGate), so a
chat's turn is this process's alone, against every other process, for as long as it renews.
"""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from bot.conversations.leases import Taken, TurnLeases
from bot.telegram.outage import DATABASE_ERRORS  # logged; the next tick tries again

logger = logging.getLogger(__name__)

# Ticks (renew, look for left-over turns) per lease time: a tick or two may fail in a row.
TICKS_PER_LEASE = 6

Recover = Callable[[int, Taken], Awaitable[None]]


def _never(chat_id: int) -> bool:
    """Keep no lease past its update."""
    return False


class LeaseKeeper:
    """This process's chat leases: taken per turn, renewed every tick, handed back at the end."""

    def __init__(
        self,
        leases: TurnLeases,
        recover: Recover,
        *,
        keep: Callable[[int], bool] = _never,
        tick: float | None = None,
    ):
        self._leases = leases
        self._recover = recover
        # A chat whose next step is already due (an album's answer) keeps its lease.
        self._keep = keep
        self.tick = tick if tick is not None else leases.ttl.total_seconds() / TICKS_PER_LEASE
        # Runs a chat's lane (set at start-up), which takes the lease and answers left-overs.
        self.schedule: Callable[[int], Awaitable[object]] | None = None
        self._unreleased: set[int] = set()
        self._owed: set[int] = set()  # taken with a left-over not answered yet
        self._recovering: dict[int, asyncio.Task] = {}
        self._failing = False
        # Set at shutdown: renew what is held, take on nothing new.
        self.stopping = False

    @contextlib.asynccontextmanager
    async def hold(self, chat_id: int) -> AsyncIterator[None]:
        """Hold the chat's lease for the block, answering first what a gone process left."""
        taken = await self._take(chat_id)
        if taken.left_over or chat_id in self._owed:
            self._owed.add(chat_id)
            await self._recover(chat_id, taken)
            self._owed.discard(chat_id)
        cancelled = False
        try:
            yield
        except asyncio.CancelledError:
            # Cut off by a shutdown's grace period: handed back with the rest at the end.
            cancelled = True
            raise
        finally:
            if not cancelled and not self._keep(chat_id):
                await self._release(chat_id)

    async def _take(self, chat_id: int) -> Taken:
        """Take the chat's lease, waiting while another live process holds it."""
        waiting = False
        while (taken := await self._leases.take(chat_id)) is None:
            if not waiting:
                logger.info("chat %s: another process is answering it; waiting for it", chat_id)
                waiting = True
            await asyncio.sleep(self.tick)
        self._unreleased.discard(chat_id)
        return taken

    async def _release(self, chat_id: int) -> None:
        """Give up the chat's lease, or try again next tick if the database is out."""
        try:
            await self._leases.release(chat_id)
        except DATABASE_ERRORS as error:
            self._unreleased.add(chat_id)
            logger.warning("could not release chat %s's lease (will retry): %s", chat_id, error)

    async def sweep(self) -> list[asyncio.Task]:
        """Renew this process's leases and start answering turns gone processes left."""
        try:
            for chat_id in sorted(self._unreleased):
                await self._leases.release(chat_id)
                self._unreleased.discard(chat_id)
            renewed = await self._leases.renew()
            found = set(await self._leases.left_over()) | self._owed
        except DATABASE_ERRORS as error:
            if not self._failing:
                logger.warning("could not renew turn leases (will retry): %s", error)
            self._failing = True
            return []
        self._failing = False
        if renewed:
            logger.debug("renewed %d lease(s)", renewed)
        if self.stopping:
            return []
        return [self._recover_later(chat_id) for chat_id in sorted(found)]

    def _recover_later(self, chat_id: int) -> asyncio.Task:
        """Run the chat's lane once, which answers its left-over, unless that already runs."""
        running = self._recovering.get(chat_id)
        if running is not None:
            return running
        assert self.schedule is not None, "schedule is set at start-up"
        task = asyncio.create_task(self._run_lane(chat_id), name=f"left-over of chat {chat_id}")
        self._recovering[chat_id] = task
        task.add_done_callback(lambda _: self._recovering.pop(chat_id, None))
        return task

    async def _run_lane(self, chat_id: int) -> None:
        """Run the chat's lane; log a failure, which the next tick retries."""
        assert self.schedule is not None
        try:
            await self.schedule(chat_id)
        except DATABASE_ERRORS as error:
            logger.warning("could not answer chat %s's left-over turn yet: %s", chat_id, error)

    async def first_sweep(self) -> None:
        """Sweep once and wait for the left-over turns it found to be answered."""
        await asyncio.gather(*await self.sweep())

    async def run(self) -> None:
        """Sweep every tick until cancelled."""
        while True:
            await asyncio.sleep(self.tick)
            await self.sweep()

    async def hand_back(self) -> None:
        """Let go of every lease still held, so the next process answers those turns at once."""
        try:
            count = await self._leases.hand_back()
        except DATABASE_ERRORS as error:
            logger.warning("could not hand back unfinished turns (they wait out the lease): %s",
                           error)  # fmt: skip
            return
        if count:
            logger.info("handed back %d unfinished turn(s) to the next process", count)
