"""The due loop: wake at the next due time, claim what is due, hand it to the outlet.

One loop runs per process. Claims go through the database, so two processes on one database
(a deploy overlaps the old and the new) never send the same instant. After downtime a one-off
late by up to a day still fires once, marked late; older ones are marked missed and told once.
A repeating reminder gets at most one catch-up, within half its period (at most two hours);
otherwise it moves on to its next occurrence. Never a burst of every missed slot.

Delivery is at least once: a fire stays claimed under a lease, renewed while it is sent, until
its outcome is recorded. A fire whose process died before that is sent again once the lease
runs out (marked late); a passing failure is retried with backoff for RETRY_FOR, then its
chat is told once. A reminder whose schedule cannot be computed is stopped and told once.
"""

import asyncio
import contextlib
import dataclasses
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from bot.reminders.models import FireOutcome, ReminderState
from bot.reminders.records import Claim, Decision, ReminderRecord
from bot.reminders.store import ReminderStore
from memory.models import utcnow

logger = logging.getLogger(__name__)

# Fired later than this after its time (the bot was down), a reminder says when it was due.
LATE_AFTER = timedelta(minutes=2)
ONE_OFF_CATCH_UP = timedelta(days=1)
MAX_REPEAT_CATCH_UP = timedelta(hours=2)
# Another process may add a reminder this one is not told of: look at least this often.
MAX_SLEEP = timedelta(minutes=5)
BATCH = 100
# How long a claimed fire stays this process's without a renewal (bot.app: TURN_LEASE_SECONDS).
LEASE = timedelta(seconds=30)
# Waits between sends of a fire after passing failures, then the last one over and over.
BACKOFF = (
    timedelta(seconds=30),
    timedelta(minutes=1),
    timedelta(minutes=2),
    timedelta(minutes=4),
)
# Passing failures are retried for this long after the first one; then the chat is told.
RETRY_FOR = timedelta(minutes=15)
OUTAGE_RETRY = timedelta(minutes=1)


@dataclass(frozen=True)
class Delivery:
    """What sending a fire came to: sent (with its message), blocked, or failed.

    A failure is passing (a timeout, a 5xx, a reset connection) when the same send may work
    later; it is retried. Whether a timed-out request reached the chat is unknown: it is sent
    again all the same (at least once, so it may arrive twice).
    """

    outcome: FireOutcome
    message_id: int | None = None
    passing: bool = False
    # Work left after the send (storing it in the conversation), done once it is recorded,
    # so that a crash during it cannot send the reminder again.
    then: Callable[[], Awaitable[None]] | None = None


class Outlet(Protocol):
    """Where fired reminders go: the Telegram layer implements it."""

    async def fire(self, claim: Claim, late: bool) -> Delivery:
        """Send one fired reminder (or answer a check-in) in its chat and topic."""

    async def tell_missed(self, missed: Sequence[ReminderRecord]) -> None:
        """Tell one chat, once, about its one-offs that came due too long ago."""

    async def tell_unsent(self, reminder: ReminderRecord) -> None:
        """Tell a chat, once, that a reminder could not be sent however often it was tried."""

    async def tell_broken(self, reminder: ReminderRecord) -> None:
        """Tell a chat, once, that a reminder could not be scheduled and was stopped."""


class Clock(Protocol):
    """The time, and a wait until a moment or a wake-up, whichever comes first."""

    def now(self) -> datetime:
        """Return the current time, aware."""

    async def wait(self, until: datetime, wake: asyncio.Event) -> None:
        """Return at until, or earlier when wake is set."""


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        """Return the current time in UTC."""
        return utcnow()

    async def wait(self, until: datetime, wake: asyncio.Event) -> None:
        """Sleep until the moment, or until woken."""
        seconds = max(0.0, (until - self.now()).total_seconds())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), timeout=seconds)


def decide(reminder: ReminderRecord, now: datetime) -> Decision:
    """Decide what a due instant becomes at now, and when its reminder fires next."""
    due = reminder.next_fire_at
    assert due is not None  # only due reminders are decided
    late = now - due
    if not reminder.repeats:
        if late <= ONE_OFF_CATCH_UP:
            return Decision(FireOutcome.CLAIMED, None, ReminderState.DONE)
        return Decision(FireOutcome.MISSED, None, ReminderState.MISSED)
    schedule = reminder.schedule
    following = schedule.next_after(due)
    upcoming = schedule.next_after(max(now, due))
    grace = MAX_REPEAT_CATCH_UP
    if following is not None:
        grace = min(grace, (following.at - due) / 2)
    outcome = FireOutcome.CLAIMED if late <= grace else FireOutcome.SKIPPED
    if upcoming is None:
        return Decision(outcome, None, ReminderState.DONE)
    return Decision(outcome, upcoming.at, ReminderState.ACTIVE)


def resend(claim: Claim, now: datetime) -> FireOutcome:
    """Decide what a fire claimed again becomes: sent again, skipped, or missed."""
    if claim.reminder.state not in (ReminderState.ACTIVE, ReminderState.DONE):
        return FireOutcome.SKIPPED  # cancelled or paused since it was first claimed
    due = claim.reminder.next_fire_at
    if due is not None and now - due > ONE_OFF_CATCH_UP:
        return FireOutcome.MISSED
    return FireOutcome.CLAIMED


class DueLoop:
    """Fires due reminders through an outlet, each instant once across processes."""

    def __init__(
        self,
        store: ReminderStore,
        outlet: Outlet,
        clock: Clock | None = None,
        wake: asyncio.Event | None = None,
        lease: timedelta = LEASE,
    ):
        self._store = store
        self._outlet = outlet
        self._clock = clock or SystemClock()
        # Set by whoever changes a reminder in this process (the tools, the buttons).
        self._wake = wake or asyncio.Event()
        self._lease = lease
        self._outage = False

    def wake(self) -> None:
        """Look again now: a reminder was set or changed in this process."""
        self._wake.set()

    async def run(self) -> None:
        """Fire what is due, then sleep until the next due time; forever."""
        while True:
            self._wake.clear()
            next_due = await self._pass()
            limit = self._clock.now() + MAX_SLEEP
            await self._clock.wait(min(next_due or limit, limit), self._wake)

    async def _pass(self) -> datetime | None:
        """Fire what is due; return when to look next. An outage is logged as it starts and ends."""
        try:
            await self.fire_due()
            next_due = await self._store.next_due_at()
        except Exception as error:
            # A driver may turn a cancellation into its own error: a stop still stops.
            if _stopping():
                raise
            # A database outage must not end reminders for good: try again shortly.
            if await self._store.reachable():
                logger.exception("could not fire due reminders; trying again in a minute")
            elif not self._outage:
                self._outage = True
                logger.warning(
                    "the database cannot be reached (%s); reminders wait for it",
                    type(error).__name__,
                )
            return self._clock.now() + OUTAGE_RETRY
        if self._outage:
            self._outage = False
            logger.info("the database answers again; reminders fire again")
        return next_due

    async def fire_due(self) -> int:
        """Claim and send everything due now; return how many instants were claimed."""
        total = 0
        while True:
            now = self._clock.now()
            lease_until = now + self._lease
            again = await self._store.claim_stale(now, BATCH, lease_until)
            await self._settle_again(again, now)
            decide_now = functools.partial(decide, now=now)
            claims = await self._store.claim_due(now, BATCH, decide_now, lease_until)
            total += len(again) + len(claims)
            every = [*again, *claims]
            await asyncio.gather(*(self._send(claim, now) for claim in every if _sends(claim)))
            await self._tell_missed([c.reminder for c in every if _missed(c)])
            for claim in claims:
                if claim.decision.outcome is FireOutcome.FAILED:
                    await self._tell(self._outlet.tell_broken, claim.reminder)
            if len(claims) < BATCH and len(again) < BATCH:
                return total

    async def _settle_again(self, again: list[Claim], now: datetime) -> None:
        """Decide each fire claimed again; record the ones not to be sent again."""
        for index, claim in enumerate(again):
            outcome = resend(claim, now)
            again[index] = dataclasses.replace(
                claim, decision=dataclasses.replace(claim.decision, outcome=outcome)
            )
            if outcome is not FireOutcome.CLAIMED:
                await self._store.record(claim.fire_id, outcome)
            if outcome is FireOutcome.MISSED and not claim.reminder.repeats:
                await self._store.mark_missed(claim.reminder.id)

    async def _send(self, claim: Claim, now: datetime) -> None:
        """Send one claim and record what came of it; a blocked chat pauses its reminders."""
        due = claim.reminder.next_fire_at
        late = claim.resent or (due is not None and now - due > LATE_AFTER)
        done = asyncio.Event()
        keeper = asyncio.create_task(self._keep_lease(claim.fire_id, done))
        try:
            delivery = await self._outlet.fire(claim, late)
        except Exception:
            if _stopping():
                raise
            logger.exception("could not send reminder %s", claim.reminder.id)
            delivery = Delivery(FireOutcome.FAILED)
        finally:
            done.set()
            await asyncio.wait({keeper})
        if delivery.passing:
            await self._retry_later(claim)
            return
        await self._store.record(claim.fire_id, delivery.outcome, delivery.message_id)
        if delivery.then is not None:
            await self._after(claim, delivery.then)
        if delivery.outcome is FireOutcome.BLOCKED:
            paused = await self._store.pause_chat(claim.reminder.chat_id)
            logger.info("chat blocked the bot: paused %d reminder(s)", paused)

    async def _after(self, claim: Claim, then: Callable[[], Awaitable[None]]) -> None:
        """Do what is left after a recorded send; a failure there sends nothing again."""
        try:
            await then()
        except Exception:
            if _stopping():
                raise
            logger.exception("could not finish reminder %s after sending it", claim.reminder.id)

    async def _keep_lease(self, fire_id: int, done: asyncio.Event) -> None:
        """Renew a fire's lease while it is sent, so that no other process sends it too."""
        # In real time: the lease is a promise to the other processes, which live in it.
        period = self._lease.total_seconds() / 3
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), timeout=period)
            if done.is_set():
                return
            try:
                await self._store.renew(fire_id, self._clock.now() + self._lease)
            except Exception as error:  # the send goes on; the lease may lapse meanwhile
                logger.info("could not renew the lease of fire %s: %s", fire_id, error)

    async def _retry_later(self, claim: Claim) -> None:
        """Send a fire again after a passing failure, with backoff; at last tell its chat."""
        now = self._clock.now()
        first = claim.failed_at or now
        if now - first >= RETRY_FOR:
            await self._store.record(claim.fire_id, FireOutcome.FAILED)
            logger.warning("reminder %s could not be sent; its chat is told", claim.reminder.id)
            await self._tell(self._outlet.tell_unsent, claim.reminder)
            return
        wait = BACKOFF[min(claim.attempts, len(BACKOFF)) - 1]
        await self._store.retry_at(claim.fire_id, first, now + wait)
        logger.info("reminder %s not sent for now; trying again in %s", claim.reminder.id, wait)

    async def _tell(
        self, tell: Callable[[ReminderRecord], Awaitable[None]], reminder: ReminderRecord
    ) -> None:
        """Tell a reminder's chat something once; a failure is logged, not retried."""
        try:
            await tell(reminder)
        except Exception as error:
            if _stopping():
                raise
            logger.warning("could not tell the chat of reminder %s: %r", reminder.id, error)

    async def _tell_missed(self, missed: list[ReminderRecord]) -> None:
        """Tell each chat once about the one-offs it missed."""
        by_chat: dict[tuple[int, int | None], list[ReminderRecord]] = {}
        for reminder in missed:
            by_chat.setdefault((reminder.chat_id, reminder.thread_id), []).append(reminder)
        for reminders in by_chat.values():
            try:
                await self._outlet.tell_missed(reminders)
            except Exception:
                if _stopping():
                    raise
                logger.exception("could not tell a chat about missed reminders")


def _stopping() -> bool:
    """Tell whether the running task is being cancelled (the bot is stopping)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _sends(claim: Claim) -> bool:
    """Tell whether a claim is to be sent (not skipped, not missed)."""
    return claim.decision.outcome is FireOutcome.CLAIMED


def _missed(claim: Claim) -> bool:
    """Tell whether a claim is a one-off missed for too long."""
    return claim.decision.outcome is FireOutcome.MISSED
