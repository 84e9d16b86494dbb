"""Reminders: the model passes the user's words, never a computed time, and says what was set."""

from evals.case import Case, Turn, said
from evals.rules import AnyOf, Called, NotCalled, Says

# "Friday" from Wednesday 11 March 2026, 09:30 in Berlin (the cases' default now).
FRIDAY_NINE = r"^2026-03-13T09:00(:00)?$"
ALL_WEEKDAYS = r"BYDAY=(?=[A-Z,]*MO)(?=[A-Z,]*TU)(?=[A-Z,]*WE)(?=[A-Z,]*TH)(?=[A-Z,]*FR)"
CITY = r"\b(city|time ?zone|where (are|do) you)\b"
FRIDAY_AT_NINE = r"\bfri(day)?\b.*\b(0?9|nine)\b"


def timed(
    tool: str,
    at_local: str,
    when: str,
    note: str,
    turn: int | None = None,
    also: tuple[tuple[str, str], ...] = (),
) -> AnyOf:
    """Return a reminder call with a wall time (at_local) or the user's own words (when)."""
    return AnyOf(
        (
            Called(tool, turn, arguments=(*also, ("at_local", at_local))),
            Called(tool, turn, arguments=(*also, ("when", when))),
        ),
        note=note,
    )


CASES: tuple[Case, ...] = (
    Case(
        name="reminder_in_twenty_minutes",
        about='"In 20 minutes": a duration (PT20M), never a timestamp the model worked out.',
        turns=said("In 20 minutes remind me to take the bread out."),
        rules=(
            Called("create_reminder", arguments=(("in_duration", r"^PT20M$"),),
                   note="passes PT20M as in_duration"),
            NotCalled("add_to_memory", note="a reminder is not a memory"),
            Says(r"09:50", note="says the time the tool resolved"),
        ),
    ),
    Case(
        name="reminder_on_friday",
        about='"On Friday at 9": the coming Friday\'s wall time, or the user\'s words: the bot '
        "resolves them.",
        turns=said("Remind me on Friday at 9 to call Sarah."),
        rules=(
            timed("create_reminder", FRIDAY_NINE, FRIDAY_AT_NINE,
                  "passes Friday 09:00 as a local wall time, or the user's words"),
            Says(r"\bFri", note="says back the day it understood"),
        ),
    ),
    Case(
        name="voice_note_time_echoed_before_reminder",
        about="A voice note's transcript asks for a reminder on Friday at nine: speech "
        "recognition mishears times, so the time is said back, and set once confirmed.",
        turns=(Turn("Remind me on Friday at nine to call Sarah.", voice=True),
               Turn("Yes, that's right.")),
        rules=(
            NotCalled("create_reminder", turn=1, note="sets nothing before the time is confirmed"),
            Says(r"\bFri", turn=1, note="says back the day it heard"),
            Says(r"\b0?9(:00)?\b|\bnine\b", turn=1, note="says back the time it heard"),
            timed("create_reminder", FRIDAY_NINE, FRIDAY_AT_NINE,
                  "then sets Friday 09:00 as a local wall time, or the user's words", turn=2),
        ),
    ),
    Case(
        name="reminder_every_weekday",
        about='"Every weekday at 8:30": one weekly rule on Monday to Friday.',
        turns=said("Every weekday at 8:30 remind me to stand up and stretch."),
        rules=(
            timed("create_reminder", "T08:30", r"\b8[:.]30\b",
                  "a weekly rule by day, Monday to Friday, at 08:30",
                  also=(("rrule", ALL_WEEKDAYS),)),
        ),
    ),
    Case(
        name="reminder_zone_unknown",
        about="The user's zone is not known: it asks for their city, never assumes the server's.",
        turns=said("Remind me tomorrow at 9 to call the dentist."),
        zone_known=False,
        rules=(Says(CITY, note="asks for the user's city or zone"),),
    ),
    Case(
        name="reminder_moved_and_cancelled",
        about="Moving and cancelling by words use the reminder's id, and change nothing else.",
        turns=said(
            "Remind me today at 3 pm to call Sarah.",
            "Actually make it 5 pm.",
            "Never mind, cancel the Sarah one.",
        ),
        rules=(
            timed("update_reminder", "T17:00", r"\b(5\s*pm|17[:.]00)\b", "moves it to 17:00",
                  turn=2),
            Called("cancel_reminder", turn=3, note="cancels it"),
            NotCalled("create_reminder", turn=2, note="does not set a second one"),
        ),
    ),
)  # fmt: skip
