"""Hold a chat's turn lease while answering it, renew it, and answer what gone processes left.

The update processor holds the lease of an update's chat around the update (ChatGate), so a
chat's turn is this process's alone, against every other process, for as long as it renews.
"""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import datetime

from telegram import Update

from bot.conversations.lease_wakeups import LeaseWakeups
from bot.conversations.leases import FENCE, Fence, Taken, TurnLeases
from bot.telegram.runtime.outage import DATABASE_ERRORS  # logged; the next tick tries again

logger = logging.getLogger(__name__)

# Ticks (renew, look for left-over turns) per lease time: a tick or two may fail in a row.
TICKS_PER_LEASE = 6
# Ticks per beat (how long a process's row lasts): a late tick is not taken for a death.
TICKS_PER_BEAT = 4

Recover = Callable[[int, Taken], Awaitable[None]]

# Commands that need no model and store no turn: they answer at once, even while another
# process (or a dead one, until it is known dead) holds the chat's lease.
NO_TURN_COMMANDS = frozenset(
    {"/start", "/help", "/memory", "/reminders", "/timezone", "/delete_my_data"}
)
# Their subcommands that do ask the model.
MODEL_SUBCOMMANDS = frozenset({("/memory", "tidy"), ("/memory", "import")})


def needs_no_turn(update: object) -> bool:
    """Tell whether an update is a command that needs no model, so it takes no chat lease."""
    if not isinstance(update, Update) or update.message is None or not update.message.text:
        return False
    words = update.message.text.split()
    command = words[0].partition("@")[0].lower()
    argument = words[1].lower() if len(words) > 1 else None
    return command in NO_TURN_COMMANDS and (command, argument) not in MODEL_SUBCOMMANDS


def _never(chat_id: int) -> bool:
    """Keep no lease past its update."""
    return False


class LeaseKeeper:
    """This process's chat leases: taken per turn, renewed every tick, handed back at the end.

    With one process (polling) a lease is let go at the first tick after its chat's turn ends:
    a busy chat's next update, while the lease is surely still this process's, takes it
    without a statement (two statements and two commits less per update). Where several
    processes share the chats (webhooks, queued set), a lease is let go as the turn ends
    unless more of the chat waits here, and a turn waiting for another process's lease is
    woken by its letting go (wakeups), so a chat handed between processes does not wait for
    a tick. A renewal that overlaps a letting go must not leave that lease looking held.
    """

    def __init__(
        self,
        leases: TurnLeases,
        recover: Recover,
        *,
        keep: Callable[[int], bool] = _never,
        tick: float | None = None,
        wakeups: LeaseWakeups | None = None,
    ):
        self._leases = leases
        self._recover = recover
        # A chat whose next step is already due (an album's answer) keeps its lease.
        self._keep = keep
        every = min(leases.ttl / TICKS_PER_LEASE, leases.beat / TICKS_PER_BEAT)
        self.tick = tick if tick is not None else every.total_seconds()
        # Runs a chat's lane (set at start-up), which takes the lease and answers left-overs.
        self.schedule: Callable[[int], Awaitable[object]] | None = None
        # Until when each lease this process took or renewed lasts at least, by its clock.
        self._expiry: dict[int, datetime] = {}
        self._idle: set[int] = set()  # held, their turns over: let go at the next tick
        self._releasing: set[int] = set()
        self._released: asyncio.Event = asyncio.Event()
        self._owed: set[int] = set()  # taken with a left-over not answered yet
        self._recovering: dict[int, asyncio.Task[None]] = {}
        self._failing = False
        self._wakeups = wakeups
        # Per renewal running: the chats let go meanwhile, which it must not count as held.
        self._renewals: list[set[int]] = []
        # Set at shutdown: renew what is held, take on nothing new.
        self.stopping = False
        # Set where several processes share the chats: whether more of a chat's updates wait
        # here behind its turn; if not, its lease is let go as the turn ends.
        self.queued: Callable[[int], bool] | None = None

    @contextlib.asynccontextmanager
    async def hold(self, chat_id: int) -> AsyncIterator[None]:
        """Hold the chat's lease for the block, answering first what a gone process left."""
        self._idle.discard(chat_id)
        taken = await self._take(chat_id)
        with self._fenced(chat_id):
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
                    self._idle.add(chat_id)
                    if self.queued is not None and not self.queued(chat_id):
                        # Another process may have the chat's next update: let go now.
                        await self._release_idle(chat_id)

    @contextlib.contextmanager
    def _fenced(self, chat_id: int) -> Iterator[None]:
        """Store the model's side of the block's turns only while the lease is still ours."""
        fence = Fence(chat_id, self._leases.holder)
        token = FENCE.set(fence)
        try:
            yield
        finally:
            FENCE.reset(token)
            if fence.lost:  # taken over: asked for afresh next time, never trusted as held
                self._expiry.pop(chat_id, None)

    def _surely_held(self, chat_id: int) -> bool:
        """Tell whether the chat's lease is this process's for at least half a lease time."""
        # Half a lease time covers the turn until the next renewals, and clocks that differ.
        expiry = self._expiry.get(chat_id)
        return expiry is not None and expiry - self._leases.now() > self._leases.ttl / 2

    async def _take(self, chat_id: int) -> Taken:
        """Take the chat's lease, waiting while another live process holds it."""
        while chat_id in self._releasing:
            await self._released.wait()  # the tick lets it go: take it afresh
        if self._surely_held(chat_id):
            return Taken()
        waiting = False
        try:
            while True:
                # Expected before asking, so a letting go between the two is not missed.
                let_go = self._expect(chat_id)
                since = self._leases.now()
                if (taken := await self._leases.take(chat_id)) is not None:
                    break
                if not waiting:
                    # Its holder may be a process known dead: then the lease is free at once.
                    if await self._free_dead_or_none():
                        continue
                    logger.info("chat %s: another process is answering it; waiting for it", chat_id)
                    waiting = True
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.tick):
                        await let_go.wait()
        finally:
            if self._wakeups is not None:
                self._wakeups.forget(chat_id)
        self._expiry[chat_id] = since + self._leases.ttl
        return taken

    def _expect(self, chat_id: int) -> asyncio.Event:
        """Return an event set once the chat's lease is let go (never, without wakeups)."""
        return asyncio.Event() if self._wakeups is None else self._wakeups.expect(chat_id)

    async def _release_idle(self, only: int | None = None) -> None:
        """Let go of the leases of chats whose turns are over; they stay held if that fails."""
        idle = self._idle if only is None else self._idle & {only}
        chats = sorted(idle - self._releasing)
        if not chats:
            return
        self._releasing.update(chats)
        for let_go in self._renewals:
            let_go.update(chats)
        try:
            await self._leases.release(*chats)
            self._idle.difference_update(chats)
        except DATABASE_ERRORS:
            if only is None:
                raise
            # A turn's own letting go: the tick lets go of it instead.
        finally:
            # Taken afresh next time, whether or not the release went through.
            for chat_id in chats:
                self._expiry.pop(chat_id, None)
            self._releasing.difference_update(chats)
            released, self._released = self._released, asyncio.Event()
            released.set()

    async def _free_dead(self) -> list[str]:
        """Free the leases of processes known dead; return their names."""
        freed = await self._leases.free_dead()
        if freed:
            logger.info(
                "freed the turns of %d process(es) known gone: %s", len(freed), ", ".join(freed)
            )
        return freed

    async def _free_dead_or_none(self) -> list[str]:
        """Free the leases of processes known dead; none if the database failed (ticks retry)."""
        try:
            return await self._free_dead()
        except DATABASE_ERRORS as error:
            # The database may be down or busy; the turn waits for the lease and asks again.
            logger.info("could not free the turns of gone processes yet: %s", error)
            return []

    async def sweep(self) -> list[asyncio.Task[None]]:
        """Renew this process's leases, let go of idle ones, and answer what gone ones left."""
        try:
            # Renewed first: on a starved machine the rest may take seconds.
            since = self._leases.now()
            renewed = await self._renew()
            self._expiry = dict.fromkeys(renewed, since + self._leases.ttl)
            await self._release_idle()
            await self._free_dead()
            found = set(await self._leases.left_over()) | self._owed
        except DATABASE_ERRORS as error:
            if not self._failing:
                logger.warning("could not renew turn leases (will retry): %s", error)
            self._failing = True
            return []
        self._failing = False
        if renewed:
            logger.debug("renewed %d lease(s)", len(renewed))
        if self._wakeups is not None:
            await self._wakeups.listen()
        if self.stopping:
            return []
        return [self._recover_later(chat_id) for chat_id in sorted(found)]

    async def _renew(self) -> set[int]:
        """Renew this process's leases; return those held, less any let go meanwhile."""
        # A lease let go during the renewal may be in what it renewed, and one let go just
        # before may be popped from _expiry before the renewal's result is written there.
        let_go = set(self._releasing)
        self._renewals.append(let_go)
        try:
            renewed = await self._leases.renew()
        finally:
            self._renewals = [r for r in self._renewals if r is not let_go]
        return set(renewed) - let_go

    def _recover_later(self, chat_id: int) -> asyncio.Task[None]:
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
        """Sweep every tick until cancelled; say when renewals come too far apart."""
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            await asyncio.sleep(self.tick)
            started = loop.time()
            await self.sweep()
            apart, last = loop.time() - last, loop.time()
            # Past half a beat, other processes come close to taking this one for dead.
            if apart > self._leases.beat.total_seconds() / 2:
                logger.warning(
                    "turn leases renewed %.1f s apart (the sweep took %.1f s): the machine "
                    "or the database is slow",
                    apart,
                    last - started,
                )

    async def hand_back(self) -> None:
        """Let go of the leases of finished turns; hand back the rest for the next process."""
        try:
            await self._release_idle()
            count = await self._leases.hand_back()
        except DATABASE_ERRORS as error:
            logger.warning(
                "could not hand back unfinished turns (they wait out the lease): %s", error
            )
            return
        if count:
            logger.info("handed back %d unfinished turn(s) to the next process", count)

    async def close(self) -> None:
        """Stop listening for other processes' let-go leases."""
        if self._wakeups is not None:
            await self._wakeups.close()
