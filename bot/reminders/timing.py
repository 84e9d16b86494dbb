"""Turn the model's words about a time into instants: wall times, durations and repeat rules.

The model never does time arithmetic. It passes a local wall time without offset
("2026-11-27T09:00") or an ISO 8601 duration ("PT20M"), and optionally an RFC 5545 repeat rule;
this module resolves them in the owner's IANA zone (rules.py reads and expands repeat rules,
with a bound on every step). Repeats keep their local wall time across
daylight-saving changes (occurrences are computed as wall times, then placed in the zone);
durations are added in UTC. A wall time that does not exist (the spring-forward gap) fires
after the gap, shifted by its length, as RFC 5545 says; an ambiguous one (the autumn overlap)
fires once, at its first occurrence.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from bot.reminders import expansion, rules
from bot.reminders.rules import MAX_COUNT
from bot.reminders.rules import TimingError as TimingError

# A reminder may not fire further ahead than this, nor start or end outside MIN_YEAR..now + 10.
MAX_AHEAD = timedelta(days=366 * 10)
MAX_YEARS_AHEAD = 10
# How far ahead a duration may reach: "in 20 minutes" to "in 400 days".
MAX_DURATION = timedelta(days=400)
_DURATION = re.compile(
    r"P(?:(?P<weeks>\d{1,4})W)?(?:(?P<days>\d{1,5})D)?"
    r"(?:T(?:(?P<hours>\d{1,6})H)?(?:(?P<minutes>\d{1,7})M)?(?:(?P<seconds>\d{1,9})S)?)?",
    re.ASCII,
)
_WEEKDAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTH_NAMES = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
)


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

    def _wall_times(self, after: datetime | None = None) -> Iterator[datetime]:
        """Yield the rule's wall times from the start (after `after`), bounded in steps."""
        assert self.rule is not None
        rule = rules.read(self.rule).limited(self.until, self.count)
        return expansion.expand(rule, self.start, after)

    def first(self) -> Occurrence:
        """Return the first occurrence, at or after the start."""
        if self.start_at is not None:
            return Occurrence(local=self.start, at=self.start_at)
        if self.rule is None:
            return place(self.start, self.zone)
        local = next(self._wall_times(), None)
        if local is None:
            raise TimingError(
                "that repeat rule has no date within ten years of its start (30 February never "
                "comes): check BYMONTH, BYMONTHDAY, BYDAY, BYSETPOS, COUNT and UNTIL"
            )
        return place(local, self.zone)

    def next_after(self, instant: datetime) -> Occurrence | None:
        """Return the first occurrence strictly after an instant, or None when none is left."""
        if self.rule is None:
            first = self.first()
            return first if first.at > instant else None
        # Wall times of the zone can run an hour apart from the instant's: start a day early.
        after = instant.astimezone(self.zone).replace(tzinfo=None) - timedelta(days=1)
        for local in self._wall_times(after):
            if local == self.start and self.start_at is not None:
                occurrence = Occurrence(local=self.start, at=self.start_at)
            else:
                occurrence = place(local, self.zone)
            if occurrence.at > instant:
                return occurrence
        return None

    def upcoming(self, now: datetime) -> Occurrence | None:
        """Return the first occurrence after now: the start, or the next repeat after it."""
        first = self.first()
        return first if first.at > now else self.next_after(now)

    def occurrence_at(self, instant: datetime) -> Occurrence:
        """Return the occurrence that fires at an instant (a moved one is placed as it is)."""
        if self.rule is None and self.start_at is None:
            first = place(self.start, self.zone)
            if first.at == instant:
                return first
        elif self.rule is not None:
            found = self.next_after(instant - timedelta(seconds=1))
            if found is not None and found.at == instant:
                return found
        return place(instant.astimezone(self.zone).replace(tzinfo=None), self.zone)


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


def parse_rule(text: str) -> str:
    """Check an RFC 5545 repeat rule (daily or coarser) and return it in its plain form."""
    body = text.strip().upper().removeprefix("RRULE:").strip()
    rules.read(body)
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
        start = _in_years(parse_local(at_local), now, "the time")
    else:
        due = (now + parse_duration(in_duration or "")).astimezone(UTC).replace(microsecond=0)
        start = due.astimezone(zone).replace(tzinfo=None)
    last = _in_years(parse_until(until), now, "until") if until is not None else None
    if count is not None and not 1 <= count <= MAX_COUNT:
        raise TimingError(f"count must be 1 to {MAX_COUNT}")
    if (last is not None or count is not None) and rule is None:
        raise TimingError("until and count only go with a repeat rule (rrule)")
    if last is not None and count is not None:
        raise TimingError("give until or count, not both")
    body = parse_rule(rule) if rule is not None else None
    if body is not None:
        own = rules.read(body)
        if (own.until or own.count) and (last is not None or count is not None):
            raise TimingError("give the end once: COUNT or UNTIL in the rule, or count or until")
        if own.until is not None:
            _in_years(own.until, now, "UNTIL")
    schedule = Schedule(zone, start, rule=body, until=last, count=count, start_at=due)
    _check_ahead(schedule, now)
    return schedule


def _in_years(local: datetime, now: datetime, what: str) -> datetime:
    """Refuse a wall time outside the years reminders are set in (1970 to ten years ahead)."""
    latest = now.year + MAX_YEARS_AHEAD
    if not expansion.MIN_YEAR <= local.year <= latest:
        raise TimingError(
            f"{what} is in the year {local.year}: reminders are set between {expansion.MIN_YEAR} "
            f"and {latest} (at most ten years ahead); ask the user for a nearer date"
        )
    return local


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
        raise TimingError(
            "every occurrence of that rule is in the past, or more than ten years ahead: check "
            "UNTIL, COUNT and the days the rule names"
        )
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
