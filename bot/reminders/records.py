"""Reminders as values: where one fires, what it is, and what a due instant became."""

import zoneinfo
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row

from bot.reminders.models import FireOutcome, Reminder, ReminderState
from bot.reminders.timing import Schedule

ACTIVE_STATES = (ReminderState.ACTIVE, ReminderState.PAUSED)


class ReminderNotFound(LookupError):
    """No reminder with that id belongs to the owner (another owner's is not found either)."""


class ReminderLimit(Exception):
    """The owner already has as many active reminders as the setting allows."""

    def __init__(self, limit: int):
        super().__init__(f"at most {limit} active reminders")
        self.limit = limit


@dataclass(frozen=True)
class Place:
    """Where a reminder fires: the owner whose it is, the chat and the forum topic."""

    owner_id: int
    chat_id: int
    thread_id: int | None = None


@dataclass(frozen=True)
class ReminderRecord:
    """A reminder as read from the database."""

    id: int
    owner_id: int
    chat_id: int
    thread_id: int | None
    text: str
    check_in: bool
    zone: str
    start_local: datetime
    start_at: datetime | None
    rule: str | None
    until_local: datetime | None
    count: int | None
    next_fire_at: datetime | None
    state: ReminderState

    @property
    def schedule(self) -> Schedule:
        """Return when it fires, as the resolver computes it."""
        return Schedule(
            zoneinfo.ZoneInfo(self.zone),
            self.start_local,
            rule=self.rule,
            until=self.until_local,
            count=self.count,
            start_at=self.start_at,
        )

    @property
    def repeats(self) -> bool:
        """Tell whether it has a repeat rule."""
        return self.rule is not None


@dataclass(frozen=True)
class Decision:
    """What a due instant becomes, and where its reminder goes next."""

    outcome: FireOutcome
    next_fire_at: datetime | None
    state: ReminderState


@dataclass(frozen=True)
class Claim:
    """A due instant this process claimed: only it sends it, until its lease runs out."""

    fire_id: int
    # Its next_fire_at is the instant being fired.
    reminder: ReminderRecord
    decision: Decision
    # The sends of this instant started so far, this one included.
    attempts: int = 1
    # When its first send failed for a passing reason; None when none did.
    failed_at: datetime | None = None

    @property
    def resent(self) -> bool:
        """Tell whether an earlier send ended with no outcome (its process died)."""
        return self.attempts > 1 and self.failed_at is None


def record_of(row: Row[*tuple[Any, ...]]) -> ReminderRecord:
    """Read a reminder row by column name."""
    values = dict(row._mapping)
    values["state"] = ReminderState(values["state"])
    return ReminderRecord(**values)


COLUMNS = tuple(getattr(Reminder, name) for name in ReminderRecord.__dataclass_fields__)
