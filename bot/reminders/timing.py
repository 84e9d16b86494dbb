"""Turn the model's words about a time into instants: wall times, durations and repeat rules.

The model never does time arithmetic. It passes a local wall time without offset
("2026-11-27T09:00") or an ISO 8601 duration ("PT20M"), and optionally an RFC 5545 repeat rule;
this module resolves them in the owner's IANA zone. Repeats keep their local wall time across
daylight-saving changes (occurrences are computed as wall times, then placed in the zone);
durations are added in UTC. A wall time that does not exist (the spring-forward gap) fires
after the gap, shifted by its length, as RFC 5545 says; an ambiguous one (the autumn overlap)
fires once, at its first occurrence.
"""

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from dateutil.rrule import rrule, rrulestr

# A repeat rule may not run past this many occurrences (COUNT) or this far ahead (UNTIL).
MAX_COUNT = 1000
MAX_AHEAD = timedelta(days=366 * 10)
# How far ahead a duration may reach: "in 20 minutes" to "in 400 days".
MAX_DURATION = timedelta(days=400)
_DURATION = re.compile(
    r"P(?:(?P<weeks>\d{1,4})W)?(?:(?P<days>\d{1,5})D)?"
    r"(?:T(?:(?P<hours>\d{1,6})H)?(?:(?P<minutes>\d{1,7})M)?(?:(?P<seconds>\d{1,9})S)?)?",
    re.ASCII,
)
# The start's wall time sets the time of day; a rule may not set its own or repeat within a day.
_FORBIDDEN_PARTS = {"BYHOUR", "BYMINUTE", "BYSECOND", "DTSTART", "BYYEARDAY", "BYWEEKNO"}
_FREQUENCIES = {"DAILY", "WEEKLY", "MONTHLY", "YEARLY"}
_WEEKDAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTH_NAMES = (
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
)  # fmt: skip


class TimingError(ValueError):
    """A time the model gave that cannot be scheduled; its message says what to do instead."""


@dataclass(frozen=True)
class Occurrence:
    """One moment a reminder fires: its wall time as scheduled and its instant in UTC."""

    local: datetime
    at: datetime
    shifted: bool = False

    def wall_time(self, zone: tzinfo) -> datetime:
        """Return the wall time the reminder really fires at (after a gap, later than local)."""
        return self.at.astimezone(zone).replace(tzinfo=None)


@dataclass(frozen=True)
class Schedule:
    """When a reminder fires: a first wall time in a zone, and an optional repeat rule."""

    zone: tzinfo
    start: datetime
    rule: str | None = None
    until: datetime | None = None
    count: int | None = None
    # The exact first instant when a duration gave it (its wall time may fall in an overlap).
    start_at: datetime | None = None

    def occurrences(self) -> rrule | None:
        """Return the rule's wall times from the start, or None for a one-off."""
        if self.rule is None:
            return None
        parsed = rrulestr(self.rule, dtstart=self.start)
        assert isinstance(parsed, rrule)  # parse_rule refused anything else
        if self.until is not None:
            return parsed.replace(until=self.until)
        return parsed if self.count is None else parsed.replace(count=self.count)

    def first(self) -> Occurrence:
        """Return the first occurrence, at or after the start."""
        if self.start_at is not None:
            return Occurrence(local=self.start, at=self.start_at)
        rule = self.occurrences()
        local = self.start if rule is None else rule.after(self.start, inc=True)
        if local is None:
            raise TimingError("that repeat rule has no occurrence: check COUNT and UNTIL")
        return place(local, self.zone)

    def next_after(self, instant: datetime) -> Occurrence | None:
        """Return the first occurrence strictly after an instant, or None when none is left."""
        rule = self.occurrences()
        if rule is None:
            first = self.first()
            return first if first.at > instant else None
        # Wall times of the zone can run an hour apart from the instant's: start a day early.
        after = instant.astimezone(self.zone).replace(tzinfo=None) - timedelta(days=1)
        while (local := rule.after(after)) is not None:
            occurrence = self.first() if local == self.start else place(local, self.zone)
            if occurrence.at > instant:
                return occurrence
            after = local
        return None


def place(local: datetime, zone: tzinfo) -> Occurrence:
    """Place a wall time in a zone: its first instant, or after the gap when it does not exist."""
    at = local.replace(tzinfo=zone, fold=0).astimezone(UTC)
    # fold=0 reads a gap's wall time with the offset before the change, which lands after the
    # gap by its length; reading the instant back shows whether the wall time existed.
    shifted = at.astimezone(zone).replace(tzinfo=None) != local
    return Occurrence(local=local, at=at, shifted=shifted)


def parse_local(text: str) -> datetime:
    """Read a local wall time such as 2026-11-27T09:00 (no offset, no zone)."""
    value = text.strip()
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise TimingError(
            f"{text!r} is not a date and time: give a local wall time like 2026-11-27T09:00"
            " (a date that exists, 24-hour clock)"
        ) from None
    if parsed.tzinfo is not None:
        raise TimingError(
            "give the local wall time without an offset or Z (like 2026-11-27T09:00), and the "
            "zone in timezone if it is not the user's own"
        )
    if "T" not in value and " " not in value:
        raise TimingError(f"{text!r} has no time of day: add one, like {value}T09:00")
    return parsed.replace(second=0, microsecond=0)


def parse_until(text: str) -> datetime:
    """Read the last local date (its whole day) or wall time a repeat may fire on."""
    value = text.strip()
    try:
        if "T" in value or " " in value:
            return parse_local(value)
        return datetime.combine(date.fromisoformat(value), time(23, 59, 59))
    except ValueError:
        raise TimingError(f"until {text!r} is not a date: give one like 2026-12-31") from None


def parse_duration(text: str) -> timedelta:
    """Read an ISO 8601 duration such as PT20M, PT1H30M or P2D (weeks to seconds)."""
    value = text.strip().upper()
    match = _DURATION.fullmatch(value)
    if match is None or value in ("P", "PT") or value.endswith("T"):
        raise TimingError(
            f"{text!r} is not a duration: use ISO 8601 like PT20M (20 minutes), PT2H, P3D; "
            "for months or years give at_local instead"
        )
    amount = timedelta(**{name: int(n) for name, n in match.groupdict().items() if n})
    if amount < timedelta(minutes=1):
        raise TimingError("a reminder needs at least one minute: use PT1M or more")
    if amount > MAX_DURATION:
        raise TimingError("that is too far ahead for a duration: give at_local instead")
    return amount


def parse_rule(text: str, start: datetime) -> str:
    """Check an RFC 5545 repeat rule (daily or coarser) and return it in its plain form."""
    body = text.strip().removeprefix("RRULE:").strip().upper()
    parts = dict(part.split("=", 1) for part in body.split(";") if "=" in part)
    if not body or not parts or "FREQ" not in parts:
        raise TimingError(f"{text!r} is not a repeat rule: use RFC 5545 like FREQ=WEEKLY;BYDAY=MO")
    if forbidden := sorted(_FORBIDDEN_PARTS & parts.keys()):
        raise TimingError(
            f"a repeat rule may not use {', '.join(forbidden)}: the time of day comes from the "
            "start, and reminders repeat at most daily"
        )
    try:
        parsed = rrulestr(body, dtstart=start)
    except (ValueError, TypeError) as error:
        raise TimingError(f"{text!r} is not a valid repeat rule ({error})") from None
    if not isinstance(parsed, rrule):
        raise TimingError("give one RRULE, without RDATE or EXRULE")
    if parts["FREQ"] not in _FREQUENCIES:
        raise TimingError("reminders repeat at most daily: FREQ must be DAILY or coarser")
    if "COUNT" in parts and "UNTIL" in parts:
        raise TimingError("give COUNT or UNTIL, not both")
    if "COUNT" in parts and not 1 <= int(parts["COUNT"]) <= MAX_COUNT:
        raise TimingError(f"COUNT must be 1 to {MAX_COUNT}")
    return body


def resolve(
    *,
    at_local: str | None,
    in_duration: str | None,
    zone: tzinfo,
    now: datetime,
    rule: str | None = None,
    until: str | None = None,
    count: int | None = None,
) -> Schedule:
    """Resolve the model's words into a schedule whose next occurrence is after now."""
    if (at_local is None) == (in_duration is None):
        raise TimingError("give exactly one of at_local (a wall time) or in_duration (PT20M)")
    due: datetime | None = None
    if at_local is not None:
        start = parse_local(at_local)
    else:
        due = (now + parse_duration(in_duration or "")).astimezone(UTC).replace(microsecond=0)
        start = due.astimezone(zone).replace(tzinfo=None)
    last = parse_until(until) if until is not None else None
    if count is not None and not 1 <= count <= MAX_COUNT:
        raise TimingError(f"count must be 1 to {MAX_COUNT}")
    if (last is not None or count is not None) and rule is None:
        raise TimingError("until and count only go with a repeat rule (rrule)")
    if last is not None and count is not None:
        raise TimingError("give until or count, not both")
    body = parse_rule(rule, start) if rule is not None else None
    schedule = Schedule(zone, start, rule=body, until=last, count=count, start_at=due)
    _check_ahead(schedule, now)
    return schedule


def _check_ahead(schedule: Schedule, now: datetime) -> None:
    """Refuse a schedule that never fires after now, or whose first fire is too far away."""
    first = schedule.first()
    if schedule.rule is None and first.at <= now:
        raise TimingError(
            f"{describe(first, schedule.zone, now)} has already passed: ask the user for a "
            "time in the future"
        )
    upcoming = schedule.next_after(now) if first.at <= now else first
    if upcoming is None:
        raise TimingError("every occurrence of that rule is in the past: check UNTIL and COUNT")
    if upcoming.at - now > MAX_AHEAD:
        raise TimingError("that is more than ten years ahead: give a nearer time")


def describe(occurrence: Occurrence, zone: tzinfo, now: datetime) -> str:
    """Say when an occurrence fires: 'Fri 27 Nov, 09:00 (Europe/Berlin), in 2 days 19 hours'."""
    wall = occurrence.wall_time(zone)
    year = f" {wall.year}" if wall.year != now.astimezone(zone).year else ""
    text = (
        f"{_WEEKDAY_NAMES[wall.weekday()]} {wall.day} {_MONTH_NAMES[wall.month - 1]}{year}, "
        f"{wall:%H:%M} ({zone})"
    )
    if occurrence.shifted:
        text += f" (there is no {occurrence.local:%H:%M} that day: the clocks go forward)"
    return f"{text}, {relative(occurrence.at - now)}"


def relative(delta: timedelta) -> str:
    """Say a time difference the way people do: 'in 2 days 19 hours', '3 hours ago'."""
    seconds = int(abs(delta.total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = (rest + 59) // 60 if not days and not hours else rest // 60
    units = [(days, "day"), (hours, "hour"), (minutes, "minute")]
    said = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in units if n][:2] or ["1 minute"]
    phrase = " ".join(said)
    return f"in {phrase}" if delta.total_seconds() >= 0 else f"{phrase} ago"
