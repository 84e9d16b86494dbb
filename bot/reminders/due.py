"""The due loop: wake at the next due time, claim what is due, hand it to the outlet.

One loop runs per process. Claims go through the database, so two processes on one database
(a deploy overlaps the old and the new) never send the same instant. After downtime a one-off
late by up to a day still fires once, marked late; older ones are marked missed and told once.
A repeating reminder gets at most one catch-up, within half its period (at most two hours);
otherwise it moves on to its next occurrence. Never a burst of every missed slot.
"""

import asyncio
import contextlib
import functools
import logging
from collections.abc import Sequence
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


@dataclass(frozen=True)
class Delivery:
    """What sending a fire came to: sent (with its message), blocked, or failed."""

    outcome: FireOutcome
    message_id: int | None = None


class Outlet(Protocol):
    """Where fired reminders go: the Telegram layer implements it."""

    async def fire(self, claim: Claim, late: bool) -> Delivery:
        """Send one fired reminder (or answer a check-in) in its chat and topic."""

    async def tell_missed(self, missed: Sequence[ReminderRecord]) -> None:
        """Tell one chat, once, about its one-offs that came due too long ago."""


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


class DueLoop:
    """Fires due reminders through an outlet, each instant once across processes."""

    def __init__(
        self,
        store: ReminderStore,
        outlet: Outlet,
        clock: Clock | None = None,
        wake: asyncio.Event | None = None,
    ):
        self._store = store
        self._outlet = outlet
        self._clock = clock or SystemClock()
        # Set by whoever changes a reminder in this process (the tools, the buttons).
        self._wake = wake or asyncio.Event()

    def wake(self) -> None:
        """Look again now: a reminder was set or changed in this process."""
        self._wake.set()

    async def run(self) -> None:
        """Fire what is due, then sleep until the next due time; forever."""
        while True:
            self._wake.clear()
            try:
                await self.fire_due()
                next_due = await self._store.next_due_at()
            except Exception:
                # A driver may turn a cancellation into its own error: a stop still stops.
                if _stopping():
                    raise
                # A database outage must not end reminders for good: try again shortly.
                logger.exception("could not fire due reminders; trying again in a minute")
                next_due = self._clock.now() + timedelta(minutes=1)
            limit = self._clock.now() + MAX_SLEEP
            await self._clock.wait(min(next_due or limit, limit), self._wake)

    async def fire_due(self) -> int:
        """Claim and send everything due now; return how many instants were claimed."""
        total = 0
        while True:
            now = self._clock.now()
            claims = await self._store.claim_due(now, BATCH, functools.partial(decide, now=now))
            total += len(claims)
            await asyncio.gather(*(self._send(claim, now) for claim in claims if _sends(claim)))
            await self._tell_missed([c.reminder for c in claims if _missed(c)])
            if len(claims) < BATCH:
                return total

    async def _send(self, claim: Claim, now: datetime) -> None:
        """Send one claim and record what came of it; a blocked chat pauses its reminders."""
        due = claim.reminder.next_fire_at
        late = due is not None and now - due > LATE_AFTER
        try:
            delivery = await self._outlet.fire(claim, late)
        except Exception:
            if _stopping():
                raise
            logger.exception("could not send reminder %s", claim.reminder.id)
            delivery = Delivery(FireOutcome.FAILED)
        await self._store.record(claim.fire_id, delivery.outcome, delivery.message_id)
        if delivery.outcome is FireOutcome.BLOCKED:
            paused = await self._store.pause_chat(claim.reminder.chat_id)
            logger.info("chat blocked the bot: paused %d reminder(s)", paused)

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
