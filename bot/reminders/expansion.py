"""Expand a checked repeat rule into wall times, examining a bounded number of days.

Every expansion stops at MAX_GAP past the last date it found (or past where it was asked
from), and refuses a rule once it has examined MAX_STEPS days, so no rule, however hostile or
however old its stored row, holds the event loop for more than milliseconds. Months that cannot
hold a date of the rule (BYMONTH leaves them out, or no BYMONTHDAY fits) are skipped whole.
"""

import bisect
import calendar
import functools
from collections.abc import Iterator, Sequence
from datetime import date, datetime, timedelta

from bot.reminders.rules import Rule, TimingError

# A rule whose next date is further than this ends there (30 February never comes).
MAX_GAP = timedelta(days=366 * 11)
# Days one expansion may examine: a rule needing more is refused, not worked through.
MAX_STEPS = 12_000
# Years a rule's start and end may lie in (the resolver is narrower for new ones).
MIN_YEAR, MAX_YEAR = 1970, 9000
_MONTH_LENGTHS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def expand(rule: Rule, start: datetime, after: datetime | None = None) -> Iterator[datetime]:
    """Yield the rule's wall times from start on (only those after `after` when given)."""
    for year in (start.year, rule.until.year if rule.until else start.year):
        if not MIN_YEAR <= year <= MAX_YEAR:
            raise TimingError(f"a repeat must start and end between {MIN_YEAR} and {MAX_YEAR}")
    if rule.count is None:
        return _walk(rule, start, after)
    # A counted rule is counted from its start: work out its dates once, then look them up.
    dates = _counted(rule, start)
    return iter(dates[bisect.bisect_right(dates, after) if after is not None else 0 :])


@functools.lru_cache(maxsize=256)
def _counted(rule: Rule, start: datetime) -> tuple[datetime, ...]:
    """Return every date of a rule with COUNT (at most MAX_COUNT of them)."""
    return tuple(_walk(rule, start, None))


def _walk(rule: Rule, start: datetime, after: datetime | None) -> Iterator[datetime]:
    """Walk the rule's periods from start (from after's period when there is no COUNT)."""
    periods = _Periods(rule, start)
    # Without COUNT the dates before `after` need not be counted: begin at its period.
    k = periods.index_of(after.date()) if after is not None else 0
    left = rule.count
    reference = max(start.date(), after.date()) if after is not None else start.date()
    last_day = rule.until.date() if rule.until is not None else date.max
    first_ordinal = start.toordinal()
    while (first_day := periods.first_day(k)) is not None:
        if first_day > min(reference + MAX_GAP, last_day):
            return
        for ordinal in periods.dates(k, first_day):
            if ordinal < first_ordinal:
                continue
            day = date.fromordinal(ordinal)
            local = datetime.combine(day, start.time())
            if (rule.until is not None and local > rule.until) or left == 0:
                return
            left = left - 1 if left is not None else None
            reference = max(reference, day)
            if after is None or local > after:
                yield local
        k += 1


class _Periods:
    """The rule's periods (days, weeks, months or years) from the start, and their dates."""

    def __init__(self, rule: Rule, start: datetime):
        self.rule = rule
        self.start = start.date()
        self.steps = 0
        # A rule without these takes them from the start, as RFC 5545 and dateutil do.
        self.months, self.month_days, self.weekdays = rule.months, rule.month_days, rule.weekdays
        if not (rule.month_days or rule.weekdays or rule.nth_weekdays):
            if rule.freq == "YEARLY":
                self.months = rule.months or frozenset({start.month})
            if rule.freq in ("YEARLY", "MONTHLY"):
                self.month_days = frozenset({start.day})
            elif rule.freq == "WEEKLY":
                self.weekdays = frozenset({start.weekday()})
        self.by_day = bool(self.weekdays or rule.nth_weekdays)
        # Numbered weekdays count within the year when a yearly rule names no month.
        self.in_year = rule.freq == "YEARLY" and not rule.months
        # The first day of the week holding the start.
        self.week = self.start - timedelta(days=(self.start.weekday() - rule.week_start) % 7)
        # Whether a month of each length can hold one of the month days at all.
        self.fits = {
            n: not self.month_days
            or any(1 <= (d if d > 0 else n + d + 1) <= n for d in self.month_days)
            for n in (28, 29, 30, 31)
        }
        # Days and weeks are looked at a month at a time (their own periods matter only to
        # BYSETPOS, which a daily rule may not use).
        self.by_month = rule.freq == "DAILY" or (rule.freq == "WEEKLY" and not rule.positions)

    def index_of(self, day: date) -> int:
        """Return the last period that begins on or before a day (0 at the earliest)."""
        freq, start = self.rule.freq, self.start
        if self.by_month:
            return max(0, (day.year - start.year) * 12 + day.month - start.month)
        if freq == "WEEKLY":
            gone = (day - self.week).days // 7
        elif freq == "MONTHLY":
            gone = (day.year - start.year) * 12 + day.month - start.month
        else:
            gone = day.year - start.year
        return max(0, gone // self.rule.interval)

    def first_day(self, k: int) -> date | None:
        """Return the first day of period k, or None past the calendar's end."""
        freq, start = self.rule.freq, self.start
        step = k if self.by_month else self.rule.interval * k
        try:
            if freq == "WEEKLY" and not self.by_month:
                return self.week + timedelta(weeks=step)
            if freq != "YEARLY":
                year, month = divmod(start.year * 12 + start.month - 1 + step, 12)
                return date(year, month + 1, 1)
            return date(start.year + step, 1, 1)
        except (OverflowError, ValueError):
            return None

    def dates(self, k: int, first: date) -> list[int]:
        """Return the ordinals of period k's dates that the rule keeps, in order."""
        self._step(1)  # a period with no day to look at counts too
        freq = self.rule.freq
        if self.by_month or freq == "MONTHLY":
            kept = self._month(first.year, first.month)
        elif freq == "WEEKLY":
            days = [first + timedelta(days=n) for n in range(7)]
            kept = [
                d.toordinal() for d in days if self._month_fits(d.year, d.month) and self._keeps(d)
            ]
        elif self.in_year and self.by_day:
            kept = self._year(first.year)
        else:
            kept = [
                d for m in sorted(self.months or range(1, 13)) for d in self._month(first.year, m)
            ]
        if not self.rule.positions:
            return kept
        size = len(kept)
        picked = {kept[p - 1 if p > 0 else p] for p in self.rule.positions if -size <= p <= size}
        return sorted(picked)

    def _step(self, days: int) -> None:
        """Count days (or periods) looked at; refuse the rule past MAX_STEPS."""
        self.steps += days
        if self.steps > MAX_STEPS:
            raise TimingError("that repeat rule takes too long to work out: give a simpler one")

    def _month_fits(self, year: int, month: int) -> bool:
        """Tell whether a month can hold a date of the rule (BYMONTH and BYMONTHDAY allow it)."""
        return (not self.months or month in self.months) and self.fits[_length(year, month)]

    def _month(self, year: int, month: int) -> list[int]:
        """Return the ordinals of a month's dates the rule keeps (none if it cannot hold one)."""
        if not self._month_fits(year, month):
            return []
        length = _length(year, month)
        first = date(year, month, 1).toordinal()
        aligned = self._aligned(first, length)
        # Only the days BYDAY or BYMONTHDAY name can be kept: work those out, look at no other.
        if self.by_day:
            numbers: Sequence[int] = [o - first + 1 for o in self._by_weekday(first, length)]
        elif self.month_days:
            numbers = sorted({n if n > 0 else length + n + 1 for n in self.month_days})
        else:
            numbers = aligned if isinstance(aligned, range) else sorted(aligned)
        self._step(len(numbers) + 1)
        days = self.month_days
        return [
            first + n - 1
            for n in numbers
            if 1 <= n <= length
            and n in aligned
            and (not days or n in days or n - length - 1 in days)
        ]

    def _year(self, year: int) -> list[int]:
        """Return the ordinals of a year's dates a yearly rule with BYDAY and no BYMONTH keeps."""
        first = date(year, 1, 1).toordinal()
        named = self._by_weekday(first, 366 if calendar.isleap(year) else 365)
        self._step(len(named) + 1)
        if not self.month_days:
            return named
        kept = []
        for ordinal in named:
            day = date.fromordinal(ordinal)
            length = _length(day.year, day.month)
            if day.day in self.month_days or day.day - length - 1 in self.month_days:
                kept.append(ordinal)
        return kept

    def _by_weekday(self, first: int, length: int) -> list[int]:
        """Return the ordinals from first on (length days) that BYDAY names, in order."""
        last = first + length - 1
        # Ordinal 1 was a Monday, so an ordinal's weekday is (ordinal - 1) % 7.
        found = {
            ordinal
            for weekday in self.weekdays
            for ordinal in range(first + (weekday - (first - 1)) % 7, last + 1, 7)
        }
        for weekday, n in self.rule.nth_weekdays:
            if n > 0:
                ordinal = first + (weekday - (first - 1)) % 7 + 7 * (n - 1)
            else:
                ordinal = last - ((last - 1) - weekday) % 7 + 7 * (n + 1)
            if first <= ordinal <= last:
                found.add(ordinal)
        return sorted(found)

    def _aligned(self, first: int, length: int) -> range | set[int]:
        """Return the days of a month (its first day's ordinal) that INTERVAL lets fire."""
        interval, freq = self.rule.interval, self.rule.freq
        if freq == "DAILY":
            return range(1 + (self.start.toordinal() - first) % interval, length + 1, interval)
        if freq == "WEEKLY" and interval > 1:
            week = self.week.toordinal()
            return {n for n in range(1, length + 1) if (first + n - 1 - week) // 7 % interval == 0}
        return range(1, length + 1)

    def _keeps(self, day: date) -> bool:
        """Tell whether a weekly rule with BYSETPOS keeps a day of its week."""
        self._step(1)
        return not self.by_day or day.weekday() in self.weekdays


def _length(year: int, month: int) -> int:
    """Return how many days a month has."""
    return 29 if month == 2 and calendar.isleap(year) else _MONTH_LENGTHS[month - 1]
