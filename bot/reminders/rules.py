"""Repeat rules, the RFC 5545 subset reminders use, read strictly: every part has a range.

dateutil's rrule takes INTERVAL=0 (and then never ends), INTERVAL=-1, BYSETPOS=1000 and its
own extensions; here every part is checked when a rule is read, before anything is stored, and
expansion.py expands what passes with a bound on its steps.
"""

import functools
import re
from dataclasses import dataclass, replace
from datetime import datetime, time

MAX_COUNT = 1000
# At most ten years between two repeats, in the rule's own unit.
MAX_INTERVAL = {"DAILY": 3660, "WEEKLY": 520, "MONTHLY": 120, "YEARLY": 10}
MAX_TEXT = 200

_PARTS = {
    "FREQ",
    "INTERVAL",
    "COUNT",
    "UNTIL",
    "BYMONTH",
    "BYMONTHDAY",
    "BYDAY",
    "BYSETPOS",
    "WKST",
}
# The most dates a period can hold: a BYSETPOS beyond it could never pick one.
_SET_SIZES = {"WEEKLY": 7, "MONTHLY": 31, "YEARLY": 366}
_SUB_DAILY = {"HOURLY", "MINUTELY", "SECONDLY"}
_WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_NUMBER = re.compile(r"[+-]?[0-9]{1,4}")
_DAY = re.compile(r"([+-]?[0-9]{1,2})?(MO|TU|WE|TH|FR|SA|SU)")
_UNTIL = re.compile(r"([0-9]{8})(?:T([0-9]{6}))?")


class TimingError(ValueError):
    """A time the model gave that cannot be scheduled; its message says what to do instead."""


@dataclass(frozen=True)
class Rule:
    """A checked repeat rule; empty sets mean the part was not given."""

    freq: str
    interval: int = 1
    count: int | None = None
    until: datetime | None = None
    months: frozenset[int] = frozenset()
    month_days: frozenset[int] = frozenset()
    weekdays: frozenset[int] = frozenset()
    nth_weekdays: frozenset[tuple[int, int]] = frozenset()
    positions: tuple[int, ...] = ()
    week_start: int = 0

    def limited(self, until: datetime | None, count: int | None) -> "Rule":
        """Return the rule with the reminder's own end (until or count) in place of its own."""
        if until is not None:
            return replace(self, until=until, count=None)
        return replace(self, count=count, until=None) if count is not None else self


@functools.lru_cache(maxsize=512)
def read(text: str) -> Rule:
    """Read and check a rule such as FREQ=WEEKLY;BYDAY=MO,FR (without RRULE: or with it)."""
    body = text.strip().upper().removeprefix("RRULE:").strip()
    if len(body) > MAX_TEXT:
        raise TimingError(f"that repeat rule is longer than {MAX_TEXT} characters")
    parts: dict[str, str] = {}
    for part in filter(None, body.split(";")):
        name, equals, value = part.partition("=")
        if not equals or not value or name in parts:
            raise TimingError(
                f"{text[:80]!r} is not a repeat rule: use RFC 5545 like FREQ=WEEKLY;BYDAY=MO"
            )
        parts[name] = value
    if "FREQ" not in parts:
        raise TimingError(
            f"{text[:80]!r} is not a repeat rule: use RFC 5545 like FREQ=WEEKLY;BYDAY=MO"
        )
    if refused := sorted(parts.keys() - _PARTS):
        raise TimingError(
            f"a repeat rule may not use {', '.join(refused)[:80]}: the time of day comes from "
            "the start, and reminders repeat at most daily; use FREQ, INTERVAL, BYDAY, "
            "BYMONTHDAY, BYMONTH, BYSETPOS, WKST, COUNT or UNTIL"
        )
    return _checked(parts)


def _checked(parts: dict[str, str]) -> Rule:
    """Build a rule from its parts, refusing any value out of its range."""
    freq = parts["FREQ"]
    if freq in _SUB_DAILY:
        raise TimingError("reminders repeat at most daily: FREQ must be DAILY or coarser")
    if freq not in MAX_INTERVAL:
        raise TimingError(f"FREQ={freq[:20]} is not valid: use DAILY, WEEKLY, MONTHLY or YEARLY")
    if "COUNT" in parts and "UNTIL" in parts:
        raise TimingError("give COUNT or UNTIL, not both")
    top = MAX_INTERVAL[freq]
    why = f"for FREQ={freq} (at most ten years between repeats)"
    interval = _number(parts.get("INTERVAL", "1"), "INTERVAL", 1, top, why)
    count = _number(parts["COUNT"], "COUNT", 1, MAX_COUNT) if "COUNT" in parts else None
    months = _numbers(parts.get("BYMONTH"), "BYMONTH", 1, 12)
    month_days = _numbers(parts.get("BYMONTHDAY"), "BYMONTHDAY", -31, 31)
    if month_days and freq == "WEEKLY":
        raise TimingError("BYMONTHDAY does not go with FREQ=WEEKLY: use FREQ=MONTHLY")
    weekdays, nth = _days(parts.get("BYDAY"), freq, bool(months))
    top = _SET_SIZES.get(freq, 0)
    positions = _numbers(parts.get("BYSETPOS"), "BYSETPOS", -top, top) if top else set()
    if "BYSETPOS" in parts and not top:
        raise TimingError("BYSETPOS picks within a week, month or year: not with FREQ=DAILY")
    if positions and not (months or month_days or weekdays or nth):
        raise TimingError("BYSETPOS picks from BYDAY, BYMONTHDAY or BYMONTH: give one of them")
    week_start = parts.get("WKST", "MO")
    if week_start not in _WEEKDAYS:
        raise TimingError("WKST must be a weekday such as MO")
    until = _until(parts["UNTIL"]) if "UNTIL" in parts else None
    days = (frozenset(months), frozenset(month_days), weekdays, nth)
    return Rule(
        freq, interval, count, until, *days, tuple(sorted(positions)), _WEEKDAYS.index(week_start)
    )


def _number(value: str, name: str, low: int, high: int, why: str = "") -> int:
    """Read one whole number of a part, within low..high."""
    if not _NUMBER.fullmatch(value) or not low <= int(value) <= high:
        raise TimingError(f"{name} must be a whole number from {low} to {high} {why}".strip())
    return int(value)


def _numbers(value: str | None, name: str, low: int, high: int) -> set[int]:
    """Read a part's list of whole numbers within low..high, none of them 0."""
    found = set()
    for item in (value or "").split(",") if value else ():
        number = _number(item, name, low, high, "(and not 0)" if low < 0 else "")
        if number == 0:
            raise TimingError(f"{name} may not be 0")
        found.add(number)
    return found


def _days(
    value: str | None, freq: str, in_months: bool
) -> tuple[frozenset[int], frozenset[tuple[int, int]]]:
    """Read BYDAY: plain weekdays, and numbered ones (the last Friday: -1FR) where allowed."""
    plain, numbered = set(), set()
    top = 5 if freq == "MONTHLY" or in_months else 53
    for item in (value or "").split(",") if value else ():
        match = _DAY.fullmatch(item)
        if match is None:
            raise TimingError(f"BYDAY {item[:12]!r} is not a weekday such as MO, 1MO or -1FR")
        day = _WEEKDAYS.index(match[2])
        if match[1] is None:
            plain.add(day)
            continue
        if freq not in ("MONTHLY", "YEARLY"):
            raise TimingError("a numbered BYDAY such as -1FR goes only with MONTHLY or YEARLY")
        if not 1 <= abs(n := int(match[1])) <= top:
            raise TimingError(f"a numbered BYDAY must be 1 to {top} or -1 to -{top}")
        numbered.add((day, n))
    return frozenset(plain), frozenset(numbered)


def _until(value: str) -> datetime:
    """Read the rule's own UNTIL, a local date (its whole day) or date and time."""
    match = _UNTIL.fullmatch(value.removesuffix("Z"))
    try:
        if match is None or value.endswith("Z"):
            raise ValueError(value)
        day = datetime.strptime(match[1], "%Y%m%d")
        clock = datetime.strptime(match[2], "%H%M%S").time() if match[2] else time(23, 59, 59)
    except ValueError:
        raise TimingError(
            "UNTIL in the rule must be a local date like 20261231 (or give until on its own)"
        ) from None
    return datetime.combine(day.date(), clock)
