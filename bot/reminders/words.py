"""The user's own words for a date and time ("next Friday at 9"), resolved by code.

The model passes the words as the user said them (in English), never a date it worked out;
this reads them against the wall clock in the user's zone. What it reads: a time ("at 9",
"9:30", "5 pm", "noon") or a part of the day ("tomorrow evening"), and a day ("today",
"tomorrow", "the day after tomorrow", "Friday", "next Friday", "in 3 days", "in 2 weeks",
or a date such as "3 December" or "2026-12-03", read by dateutil). Bounded: the words are at
most MAX_WORDS characters and every pattern is a plain regex on them. Anything else is refused
with a sentence the model can act on (pass a wall time in at_local instead).
"""

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from dateutil import parser as dateutil_parser

from bot.reminders.rules import TimingError

MAX_WORDS = 100
WEEKDAYS = {
    name: number
    for number, names in enumerate(
        (
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thur", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        )
    )
    for name in names
}
# A part of the day said without a time: its usual hour.
PARTS = {
    "morning": time(9),
    "noon": time(12),
    "midday": time(12),
    "afternoon": time(15),
    "evening": time(18),
    "tonight": time(20),
    "night": time(21),
    "midnight": time(0),
}
# Parts after which "at 7" means 7 pm.
_LATE = frozenset({"afternoon", "evening", "tonight", "night"})
_CLOCK = re.compile(
    r"\b(?:at\s+)?(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ampm>[ap])\.?m\.?(?=\W|$)"
    r"|\b(?:at\s+)?(?P<h24>\d{1,2})[:.h](?P<m24>\d{2})\b"
    r"|\bat\s+(?P<hat>\d{1,2})\b(?!\s*(?:day|week|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))"
)
_PART = re.compile(r"\b(?:in\s+the\s+|this\s+)?(" + "|".join(PARTS) + r")\b")
_RELATIVE = re.compile(r"\bin\s+(\d{1,3}|a|one|two|three)\s+(day|week)s?\b")
_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3}
_WEEKDAY = re.compile(r"\b(?:(on|this|next)\s+)?(" + "|".join(WEEKDAYS) + r")\b")
_FILLER = re.compile(r"\b(?:on|at|the|of|by|in)\b|[,]")


@dataclass(frozen=True)
class Said:
    """What the words named: a day, a time of day, or both (None: not said)."""

    day: date | None
    at: time | None
    weekday: bool = False  # the day is a weekday's name: today's, once past, means next week's


def _clock(text: str) -> tuple[time | None, str]:
    """Return the time of day the words name, and the words without it."""
    found = _CLOCK.search(text)
    if found is None:
        return None, text
    rest = text[: found.start()] + " " + text[found.end() :]
    if found["h"] is not None:
        hour, minute = int(found["h"]), int(found["m"] or 0)
        if not 1 <= hour <= 12:
            raise TimingError(f"{found[0].strip()!r} is not a time: use 1-12 with am/pm")
        hour = hour % 12 + (12 if found["ampm"] == "p" else 0)
    elif found["h24"] is not None:
        hour, minute = int(found["h24"]), int(found["m24"])
    else:
        hour, minute = int(found["hat"]), 0
    if hour > 23 or minute > 59:
        raise TimingError(f"{found[0].strip()!r} is not a time of day")
    return time(hour, minute), rest


def _day(text: str, today: date) -> tuple[date | None, str]:
    """Return the day the words name, and the words without it."""
    if (found := re.search(r"\b(?:the\s+)?day\s+after\s+tomorrow\b", text)) is not None:
        return today + timedelta(days=2), text.replace(found[0], " ")
    for word, days in (("today", 0), ("tonight", 0), ("tomorrow", 1)):
        if re.search(rf"\b{word}\b", text):
            return today + timedelta(days=days), text.replace(word, " ", 1)
    if (found := _RELATIVE.search(text)) is not None:
        amount = _NUMBERS.get(found[1]) or int(found[1])
        step = timedelta(weeks=amount) if found[2] == "week" else timedelta(days=amount)
        return today + step, text.replace(found[0], " ")
    if (found := _WEEKDAY.search(text)) is not None:
        ahead = (WEEKDAYS[found[2]] - today.weekday()) % 7
        if found[1] == "next" and ahead == 0:
            ahead = 7
        return today + timedelta(days=ahead), text.replace(found[0], " ")
    return None, text


def read_words(words: str, now: datetime) -> Said:
    """Read the day and the time of day the user's words name, against the local now."""
    text = " ".join(words.casefold().split())
    if not text or len(text) > MAX_WORDS:
        raise TimingError(f"give the user's words for the time in 1 to {MAX_WORDS} characters")
    at, text = _clock(text)
    part = _PART.search(text)
    if part is not None:
        text = text.replace(part[0], " ")
        if at is None:
            at = PARTS[part[1]]
        elif part[1] in _LATE and at.hour < 12:
            at = at.replace(hour=at.hour + 12)
    day, text = _day(text, now.date())
    weekday = _WEEKDAY.search(words.casefold()) is not None and day is not None
    if part is not None and part[1] == "tonight" and day is None:
        day = now.date()
    rest = " ".join(_FILLER.sub(" ", text).split())
    if rest and day is None:
        day = _calendar_date(rest, now.date())
    elif rest:
        raise TimingError(f"{words!r}: I could not read {rest!r}")
    if day is None and at is None:
        raise TimingError(f"{words!r} names no day or time I can read")
    return Said(day, at, weekday)


def _calendar_date(text: str, today: date) -> date:
    """Read a calendar date ("3 December", "2026-12-03"); one without a year is the next."""
    try:
        read = dateutil_parser.parse(text, default=datetime.combine(today, time()))
    except (ValueError, OverflowError):
        raise TimingError(
            f"I could not read {text!r} as a date: pass the user's words such as 'next Friday "
            "at 9' or '3 December 17:30', or a wall time in at_local"
        ) from None
    day = read.date()
    if day < today and not re.search(r"\b\d{4}\b", text):
        day = day.replace(year=day.year + 1)
    return day


def resolve_words(words: str, now: datetime, keep: datetime | None = None) -> datetime:
    """Return the local wall time the words name, as now (local, naive) reads them.

    keep: a reminder's current wall time, when it is moved: what the words leave out (its day,
    or its time of day) stays as it was. Without it, a time alone is its next occurrence and a
    day alone is refused (a reminder needs a time).
    """
    said = read_words(words, now)
    if keep is not None:
        day = said.day or keep.date()
        return datetime.combine(day, said.at or keep.time())
    if said.at is None:
        raise TimingError(f"{words!r} has no time of day: ask the user what time, then pass both")
    if said.day is not None:
        local = datetime.combine(said.day, said.at)
        return local + timedelta(weeks=1) if said.weekday and local <= now else local
    today = datetime.combine(now.date(), said.at)
    return today if today > now else today + timedelta(days=1)
