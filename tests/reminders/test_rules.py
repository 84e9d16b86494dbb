"""The repeat rules' own reader and expansion: strict parts, the same dates as dateutil."""

from datetime import datetime, timedelta
from itertools import islice

import pytest
from dateutil.rrule import rrulestr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.reminders.expansion import MAX_GAP, expand
from bot.reminders.rules import TimingError, read

DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


@st.composite
def rules(draw: st.DrawFn) -> str:
    """Draw a rule of the subset reminders use, in a form dateutil reads the same way."""
    freq = draw(st.sampled_from(["DAILY", "WEEKLY", "MONTHLY", "YEARLY"]))
    parts = [f"FREQ={freq}", f"INTERVAL={draw(st.integers(1, 4))}"]
    if draw(st.booleans()):
        parts.append("BYMONTH=" + ",".join(map(str, draw(st.sets(st.integers(1, 12), min_size=1,
                                                                   max_size=3)))))  # fmt: skip
    if freq != "WEEKLY" and draw(st.booleans()):
        days = draw(st.sets(st.integers(-31, 31).filter(bool), min_size=1, max_size=3))
        parts.append("BYMONTHDAY=" + ",".join(map(str, days)))
    if draw(st.booleans()):
        numbered = freq in ("MONTHLY", "YEARLY") and draw(st.booleans())
        weekdays = draw(st.sets(st.sampled_from(DAYS), min_size=1, max_size=3))
        if numbered:
            # dateutil reads numbered and plain days mixed as both at once: keep them apart.
            parts.append("BYDAY=" + ",".join(f"{draw(st.sampled_from([1, 2, -1, 4]))}{d}"
                                             for d in weekdays))  # fmt: skip
        else:
            parts.append("BYDAY=" + ",".join(weekdays))
    if freq in ("MONTHLY", "YEARLY") and len(parts) > 2 and draw(st.booleans()):
        parts.append(f"BYSETPOS={draw(st.sampled_from([1, 2, -1, -2]))}")
    if draw(st.booleans()):
        parts.append(f"COUNT={draw(st.integers(1, 30))}")
    return ";".join(parts)


def walk(rule: str, start: datetime, most: int) -> tuple[list[datetime], bool]:
    """Return up to `most` dates of a rule, and whether the walk hit its step bound."""
    found: list[datetime] = []
    try:
        found.extend(islice(expand(read(rule), start), most))
    except TimingError:
        return found, True
    return found, False


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=rules(), start=st.datetimes(datetime(2020, 1, 1), datetime(2030, 12, 31)))
def test_the_dates_are_dateutils(rule, start):
    start = start.replace(second=0, microsecond=0)
    ours, bounded = walk(rule, start, 25)
    if not ours:
        return  # no date within the window: dateutil would search to the year 9999
    theirs = list(islice(rrulestr(rule, dtstart=start), len(ours)))
    assert ours == theirs
    if len(ours) < 25 and "COUNT" not in rule and not bounded:
        # Ours ended: dateutil has no date within the gap after ours either.
        later = rrulestr(rule, dtstart=start).after(ours[-1])
        assert later is None or later - ours[-1] > MAX_GAP - timedelta(days=1)


@settings(max_examples=80, deadline=None)
@given(rule=rules(), start=st.datetimes(datetime(2020, 1, 1), datetime(2030, 12, 31)),
       after=st.datetimes(datetime(2020, 1, 1), datetime(2036, 12, 31)))  # fmt: skip
def test_a_search_from_later_finds_what_a_walk_from_the_start_finds(rule, start, after):
    start = start.replace(second=0, microsecond=0)
    walked, _ = walk(rule, start, 400)
    later = [d for d in walked if d > after][:3]
    searched = list(islice(expand(read(rule), start, after), 3))
    # A walk ends at a gap longer than MAX_GAP; a search from later sees only what follows.
    assert searched[: len(later)] == later
    assert len(searched) >= len(later)


@pytest.mark.parametrize(("rule", "words"), [
    ("FREQ=DAILY;INTERVAL=0", "INTERVAL must be a whole number from 1 to 3660"),
    ("FREQ=YEARLY;INTERVAL=-1", "INTERVAL must be a whole number from 1 to 10"),
    ("FREQ=MONTHLY;INTERVAL=1000000000", "INTERVAL must be"),
    ("FREQ=DAILY;INTERVAL=" + "9" * 5000, "longer than 200"),
    ("FREQ=WEEKLY;INTERVAL=521", "1 to 520"),
    ("FREQ=DAILY;COUNT=0", "COUNT must be"),
    ("FREQ=DAILY;COUNT=1001", "COUNT must be"),
    ("FREQ=DAILY;BYMONTH=13", "BYMONTH must be"),
    ("FREQ=DAILY;BYMONTHDAY=0", "may not be 0"),
    ("FREQ=DAILY;BYMONTHDAY=32", "BYMONTHDAY must be"),
    ("FREQ=WEEKLY;BYMONTHDAY=3", "does not go with FREQ=WEEKLY"),
    ("FREQ=WEEKLY;BYDAY=1MO", "only with MONTHLY or YEARLY"),
    ("FREQ=MONTHLY;BYDAY=6MO", "1 to 5"),
    ("FREQ=YEARLY;BYDAY=54MO", "1 to 53"),
    ("FREQ=MONTHLY;BYDAY=XX", "not a weekday"),
    ("FREQ=MONTHLY;BYSETPOS=1", "BYSETPOS picks from"),
    ("FREQ=DAILY;BYDAY=MO;BYSETPOS=1", "not with FREQ=DAILY"),
    ("FREQ=MONTHLY;BYDAY=MO;BYSETPOS=32", "BYSETPOS must be"),
    ("FREQ=YEARLY;BYDAY=MO;BYSETPOS=-367", "BYSETPOS must be"),
    ("FREQ=DAILY;BYEASTER=0", "may not use BYEASTER"),
    ("FREQ=DAILY;BYHOUR=9", "may not use BYHOUR"),
    ("FREQ=DAILY;DTSTART=19700101T000000", "may not use DTSTART"),
    ("FREQ=DAILY;FREQ=WEEKLY", "not a repeat rule"),
    ("FREQ=DAILY;INTERVAL", "not a repeat rule"),
    ("FREQ=DAILY;INTERVAL=", "not a repeat rule"),
    ("INTERVAL=2", "not a repeat rule"),
    ("FREQ=HOURLY", "at most daily"),
    ("FREQ=FORTNIGHTLY", "not valid"),
    ("FREQ=DAILY;COUNT=2;UNTIL=20261231", "not both"),
    ("FREQ=DAILY;UNTIL=20261231T000000Z", "UNTIL in the rule"),
    ("FREQ=DAILY;UNTIL=20260230", "UNTIL in the rule"),
    ("FREQ=WEEKLY;BYDAY=" + ",".join(["MO"] * 100), "longer than 200"),
    ("FREQ=DAILY;WKST=XX", "WKST"),
])  # fmt: skip
def test_a_rule_out_of_range_is_refused_with_what_is_allowed(rule, words):
    with pytest.raises(TimingError, match=words):
        read(rule)
