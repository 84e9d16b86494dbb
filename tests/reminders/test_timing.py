"""The resolver: wall times, durations and repeat rules placed in zones, across DST changes."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.reminders.timing import TimingError, describe, parse_duration, resolve
from bot.reminders.zones import find_zone

BERLIN, NEW_YORK, SYDNEY = (
    ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York"), ZoneInfo("Australia/Sydney"),
)  # fmt: skip
NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)  # a Tuesday


def utc(text: str) -> datetime:
    """Read an instant written as YYYY-MM-DDTHH:MM[:SS] in UTC."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# (id, zone, now, arguments, the first fire in UTC, whether the wall time did not exist)
FIRST_FIRES = [
    ("friday-at-9", BERLIN, NOW, {"at_local": "2026-11-27T09:00"}, "2026-11-27T08:00", False),
    ("berlin-gap", BERLIN, NOW, {"at_local": "2027-03-28T02:30"}, "2027-03-28T01:30", True),
    ("berlin-overlap", BERLIN, NOW, {"at_local": "2027-10-31T02:30"}, "2027-10-31T00:30", False),
    ("new-york-gap", NEW_YORK, NOW, {"at_local": "2027-03-14T02:30"}, "2027-03-14T07:30", True),
    ("new-york-overlap", NEW_YORK, NOW, {"at_local": "2027-11-07T01:30"}, "2027-11-07T05:30",
     False),
    ("sydney-gap", SYDNEY, NOW, {"at_local": "2027-10-03T02:30"}, "2027-10-02T16:30", True),
    ("sydney-overlap", SYDNEY, NOW, {"at_local": "2027-04-04T02:30"}, "2027-04-03T15:30", False),
    ("in-20-minutes", BERLIN, utc("2026-11-24T12:00:30"), {"in_duration": "PT20M"},
     "2026-11-24T12:20:30", False),
    ("in-1-minute", BERLIN, NOW, {"in_duration": "PT1M"}, "2026-11-24T12:01", False),
    ("in-2-days", NEW_YORK, NOW, {"in_duration": "P2D"}, "2026-11-26T12:00", False),
    ("duration-across-gap-is-utc", BERLIN, utc("2027-03-28T00:30"), {"in_duration": "PT2H"},
     "2027-03-28T02:30", False),
    ("duration-into-overlap-keeps-instant", BERLIN, utc("2026-10-25T00:10"),
     {"in_duration": "PT1H"}, "2026-10-25T01:10", False),
    ("29-february-leap-year", BERLIN, NOW, {"at_local": "2028-02-29T09:00"}, "2028-02-29T08:00",
     False),
    ("last-friday", BERLIN, NOW,
     {"at_local": "2026-11-24T09:00", "rule": "FREQ=MONTHLY;BYDAY=-1FR"},
     "2026-11-27T08:00", False),
    ("repeat-starting-in-the-past-today", BERLIN, NOW,
     {"at_local": "2026-11-24T08:30", "rule": "FREQ=DAILY"}, "2026-11-25T07:30", False),
    ("month-day-31", BERLIN, NOW,
     {"at_local": "2026-11-24T09:00", "rule": "FREQ=MONTHLY;BYMONTHDAY=31"},
     "2026-12-31T08:00", False),
    ("last-day-of-month", BERLIN, NOW,
     {"at_local": "2027-02-01T09:00", "rule": "RRULE:FREQ=MONTHLY;BYMONTHDAY=-1"},
     "2027-02-28T08:00", False),
    ("weekdays-from-saturday", NEW_YORK, utc("2026-11-28T12:00"),
     {"at_local": "2026-11-28T08:30", "rule": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"},
     "2026-11-30T13:30", False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("zone", "now", "args", "first", "shifted"),
    [case[1:] for case in FIRST_FIRES],
    ids=[c[0] for c in FIRST_FIRES],
)
def test_first_fire(zone, now, args, first, shifted):
    arguments = {"at_local": None, "in_duration": None} | args
    schedule = resolve(zone=zone, now=now, **arguments)
    occurrence = schedule.first()
    upcoming = occurrence if occurrence.at > now else schedule.next_after(now)
    assert upcoming is not None
    assert upcoming.at == utc(first)
    assert upcoming.shifted is shifted


# (id, zone, arguments, the instants of the first few fires in UTC)
SERIES = [
    ("daily-keeps-wall-time-across-spring", BERLIN,
     {"at_local": "2027-03-27T09:00", "rule": "FREQ=DAILY"},
     ["2027-03-27T08:00", "2027-03-28T07:00", "2027-03-29T07:00"]),
    ("weekly-keeps-wall-time-across-autumn", NEW_YORK,
     {"at_local": "2027-11-01T08:30", "rule": "FREQ=WEEKLY"},
     ["2027-11-01T12:30", "2027-11-08T13:30"]),
    ("ambiguous-wall-time-fires-once", BERLIN,
     {"at_local": "2027-10-30T02:30", "rule": "FREQ=DAILY"},
     ["2027-10-30T00:30", "2027-10-31T00:30", "2027-11-01T01:30"]),
    ("gap-in-a-daily-series", SYDNEY, {"at_local": "2027-10-02T02:30", "rule": "FREQ=DAILY"},
     ["2027-10-01T16:30", "2027-10-02T16:30", "2027-10-03T15:30"]),
    ("month-day-31-skips-short-months", BERLIN,
     {"at_local": "2027-01-31T09:00", "rule": "FREQ=MONTHLY"},
     ["2027-01-31T08:00", "2027-03-31T07:00", "2027-05-31T07:00"]),
    ("yearly-29-february", BERLIN, {"at_local": "2028-02-29T09:00", "rule": "FREQ=YEARLY"},
     ["2028-02-29T08:00", "2032-02-29T08:00"]),
    ("until-a-date", BERLIN,
     {"at_local": "2026-11-25T09:00", "rule": "FREQ=DAILY", "until": "2026-11-26"},
     ["2026-11-25T08:00", "2026-11-26T08:00"]),
    ("count", BERLIN, {"at_local": "2026-11-25T09:00", "rule": "FREQ=WEEKLY", "count": 3},
     ["2026-11-25T08:00", "2026-12-02T08:00", "2026-12-09T08:00"]),
    ("count-in-the-rule", BERLIN, {"at_local": "2026-11-25T09:00", "rule": "FREQ=DAILY;COUNT=2"},
     ["2026-11-25T08:00", "2026-11-26T08:00"]),
    ("last-friday-each-month", BERLIN,
     {"at_local": "2026-11-27T09:00", "rule": "FREQ=MONTHLY;BYDAY=-1FR"},
     ["2026-11-27T08:00", "2026-12-25T08:00", "2027-01-29T08:00"]),
]  # fmt: skip


@pytest.mark.parametrize(("zone", "args", "fires"), [c[1:] for c in SERIES],
                         ids=[c[0] for c in SERIES])  # fmt: skip
def test_series(zone, args, fires):
    schedule = resolve(in_duration=None, zone=zone, now=NOW, **args)
    got = [schedule.first()]
    while len(got) < len(fires) + 1 and (nxt := schedule.next_after(got[-1].at)) is not None:
        got.append(nxt)
    expected_count = (
        len(fires) if "until" in args or "count" in args or "COUNT" in args["rule"] else None
    )
    assert [o.at for o in got[: len(fires)]] == [utc(f) for f in fires]
    if expected_count is not None:
        assert len(got) == expected_count, "the series must end"


# (id, arguments, words the refusal must contain)
REFUSALS = [
    ("past-one-off", {"at_local": "2026-11-24T09:00"}, "already passed"),
    ("30-february", {"at_local": "2027-02-30T09:00"}, "not a date"),
    ("29-february-common-year", {"at_local": "2027-02-29T09:00"}, "not a date"),
    ("offset-given", {"at_local": "2026-11-27T09:00+01:00"}, "without an offset"),
    ("no-time-of-day", {"at_local": "2026-11-27"}, "no time of day"),
    ("both", {"at_local": "2026-11-27T09:00", "in_duration": "PT1H"}, "exactly one"),
    ("neither", {}, "exactly one"),
    ("months-as-duration", {"in_duration": "P1M"}, "not a duration"),
    ("zero-duration", {"in_duration": "PT0M"}, "at least one minute"),
    ("computed-timestamp-as-duration", {"in_duration": "2026-11-24T12:20"}, "not a duration"),
    ("hourly", {"at_local": "2026-11-25T09:00", "rule": "FREQ=HOURLY"}, "at most daily"),
    ("minutely", {"at_local": "2026-11-25T09:00", "rule": "FREQ=MINUTELY"}, "at most daily"),
    ("byhour", {"at_local": "2026-11-25T09:00", "rule": "FREQ=DAILY;BYHOUR=9,17"}, "BYHOUR"),
    ("garbage-rule", {"at_local": "2026-11-25T09:00", "rule": "every weekday"}, "not a repeat"),
    ("bad-frequency", {"at_local": "2026-11-25T09:00", "rule": "FREQ=SOMETIMES"}, "valid"),
    ("huge-count", {"at_local": "2026-11-25T09:00", "rule": "FREQ=DAILY", "count": 5000},
     "count must be"),
    ("huge-count-in-rule", {"at_local": "2026-11-25T09:00", "rule": "FREQ=DAILY;COUNT=99999"},
     "COUNT must be"),
    ("until-and-count", {"at_local": "2026-11-25T09:00", "rule": "FREQ=DAILY", "count": 2,
                         "until": "2026-12-01"}, "not both"),
    ("until-without-rule", {"at_local": "2026-11-25T09:00", "until": "2026-12-01"}, "repeat rule"),
    ("all-in-the-past", {"at_local": "2026-11-01T09:00", "rule": "FREQ=DAILY",
                         "until": "2026-11-10"}, "in the past"),
    ("too-far-ahead", {"at_local": "2040-01-01T09:00"}, "ten years"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "words"), [c[1:] for c in REFUSALS], ids=[c[0] for c in REFUSALS])
def test_refusals(args, words):
    arguments = {"at_local": None, "in_duration": None} | args
    with pytest.raises(TimingError, match=words):
        resolve(zone=BERLIN, now=NOW, **arguments)


def test_the_echo_says_day_time_zone_and_how_far():
    now = datetime(2026, 11, 24, 13, 0, tzinfo=UTC)
    schedule = resolve(at_local="2026-11-27T09:00", in_duration=None, zone=BERLIN, now=now)
    assert describe(schedule.first(), BERLIN, now) == (
        "Fri 27 Nov, 09:00 (Europe/Berlin), in 2 days 19 hours"
    )


def test_the_echo_of_a_gap_says_the_real_time():
    schedule = resolve(at_local="2027-03-28T02:30", in_duration=None, zone=BERLIN, now=NOW)
    text = describe(schedule.first(), BERLIN, NOW)
    assert text.startswith("Sun 28 Mar 2027, 03:30 (Europe/Berlin)")
    assert "no 02:30" in text


def test_durations_read_as_iso_8601():
    assert parse_duration("PT1H30M").total_seconds() == 5400
    assert parse_duration("p1w").days == 7


@pytest.mark.parametrize(("said", "zone"), [
    ("Berlin", "Europe/Berlin"), ("europe/berlin", "Europe/Berlin"),
    ("Europe/Berlin", "Europe/Berlin"), ("new york", "America/New_York"),
    ("New_York", "America/New_York"), ("sydney", "Australia/Sydney"),
    ("UTC", "UTC"), ("  Tokyo ", "Asia/Tokyo"), ("GMT", "UTC"), ("Etc/GMT+5", "Etc/GMT+5"),
    ("etc/utc", "Etc/UTC"), ("US/Eastern", "US/Eastern"), ("Japan", "Japan"),
])  # fmt: skip
def test_zones_by_name_or_city(said, zone):
    found = find_zone(said)
    assert found is not None and str(found) == zone


@pytest.mark.parametrize("said", ["Atlantis", "", "x" * 100, "../../etc/passwd", "Berlin, Germany"])
def test_unknown_zones(said):
    assert find_zone(said) is None


@pytest.mark.parametrize("said", [
    "localtime", "Factory", "posixrules", "EST", "EST5EDT", "pst8pdt", "CET", "MET", "HST",
])  # fmt: skip
def test_zones_that_are_no_persons_place_are_refused(said):
    # zoneinfo accepts them all: the server's own zone, tzdata's "-00" placeholder, and rule
    # names a person would take for theirs (EST has no summer time).
    assert find_zone(said) is None
