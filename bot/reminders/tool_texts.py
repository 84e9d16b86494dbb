"""What the reminder tools tell the model: the resolved time, and refusals it can act on."""

from collections.abc import Sequence
from datetime import datetime, tzinfo

from bot.reminders.models import ReminderState
from bot.reminders.records import ReminderLimit, ReminderNotFound, ReminderRecord
from bot.reminders.timing import Schedule, TimingError, describe

ZONE_UNKNOWN = (
    "The user's time zone is not known yet, and reminders are never set in the server's zone. "
    "Ask the user which city they are in, call set_timezone with it, then set the reminder."
)
DATABASE_ERROR = (
    "The reminder database had an error, so nothing was changed. Tell the user reminders are "
    "unavailable right now; do not retry in this turn."
)
# How many coming fires of a repeating reminder a result lists.
SHOWN_OCCURRENCES = 3


def unknown_zone(named: str) -> str:
    """Say that a zone name was not understood."""
    return (
        f"{named[:64]!r} is not a time zone or city I know. Ask the user for their city (or "
        "the nearest big one), then use its IANA name such as Europe/Berlin."
    )


def refusal(error: Exception, max_active: int) -> str:
    """Turn a refused change into a sentence the model can act on."""
    if isinstance(error, ReminderNotFound):
        return (
            f"No reminder {error.args[0]} of this user: call list_reminders for their ids. "
            "Nothing was changed."
        )
    if isinstance(error, ReminderLimit):
        return (
            f"The user already has {max_active} active reminders, the most allowed. Nothing was "
            "set: tell them, and offer to cancel some (list_reminders)."
        )
    return f"{error} Nothing was changed."


def clock_time(now: datetime, zone: tzinfo) -> str:
    """Return the wall time now in a zone, like 'Tue 24 Nov, 14:05'."""
    return f"{now.astimezone(zone):%a %d %b, %H:%M}"


def when(schedule: Schedule, next_at: datetime | None, now: datetime) -> str:
    """Say when a schedule fires next (at next_at), in its zone, and how repeats go on."""
    if next_at is None:
        return "it will not fire again"
    zone = schedule.zone
    # The schedule's own occurrence: it knows when a wall time fell in a gap and moved.
    said = describe(schedule.occurrence_at(next_at), zone, now)
    if schedule.rule is None:
        return said
    later: list[str] = []
    instant = next_at
    while len(later) < SHOWN_OCCURRENCES - 1 and (shown := schedule.next_after(instant)):
        later.append(f"{shown.wall_time(zone):%a %d %b %Y %H:%M}")
        instant = shown.at
    tail = f"; then {', '.join(later)}" if later else "; that is the last time"
    return f"{said} (repeats {schedule.rule}{tail})"


def when_listed(reminder: ReminderRecord, now: datetime) -> str:
    """Say when a stored reminder fires next; a rule that cannot be worked out says so."""
    try:
        return when(reminder.schedule, reminder.next_fire_at, now)
    except TimingError:
        return f"its repeat rule {reminder.rule!r} cannot be worked out: offer to cancel it"


def _kind(reminder: ReminderRecord) -> str:
    """Name a reminder's kind for the model."""
    return "check-in" if reminder.check_in else "reminder"


def _state(reminder: ReminderRecord) -> str:
    """Name a reminder's kind, and say when it is paused."""
    paused = reminder.state is ReminderState.PAUSED
    return _kind(reminder) + (", paused: the chat blocked the bot" if paused else "")


def created(reminder: ReminderRecord, said: str) -> str:
    """Confirm a new reminder with the time the code understood (said, built before the write)."""
    return (
        f"Set {_kind(reminder)} {reminder.id}: {reminder.text!r}, first {said}. "
        "Tell the user this time exactly, in their words' language."
    )


def updated(reminder: ReminderRecord, said: str) -> str:
    """Confirm a changed reminder with the time the code understood (said, built before)."""
    return (
        f"Changed {_kind(reminder)} {reminder.id}: {reminder.text!r}, next {said}."
        " Tell the user this time exactly."
    )


def listing(reminders: Sequence[ReminderRecord], now: datetime) -> str:
    """List reminders with their ids and next times."""
    if not reminders:
        return "The user has no upcoming reminders."
    lines = [
        f"- id {r.id}: {r.text!r} ({_state(r)}), next {when_listed(r, now)}" for r in reminders
    ]
    return "Upcoming reminders, soonest first:\n" + "\n".join(lines)
