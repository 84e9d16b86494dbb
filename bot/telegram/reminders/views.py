"""What reminders show in Telegram: fired messages, /reminders pages, /timezone: pure builders."""

import enum
import html
import re
from collections.abc import Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.reminders.records import ReminderRecord
from bot.reminders.timing import Occurrence, TimingError, describe, place
from bot.telegram.ui import Button, View, callback_data

PER_PAGE = 8
PREFIX = "r:"  # of every reminder button's data


class Press(enum.StrEnum):
    """What a reminder button does."""

    DONE = "d"
    TEN_MINUTES = "m"
    HOUR = "h"
    TOMORROW = "t"
    SKIP_NEXT = "k"
    STOP = "s"
    CANCEL = "c"
    PAGE = "p"


_DATA = re.compile(r"r:([dmhtkscp]):([0-9]{1,18})(?::([0-9]{1,4}))?")

ZONE_UNKNOWN = (
    "I don't know your time zone yet. Send <code>/timezone Berlin</code> (your city) or "
    "<code>/timezone Europe/Berlin</code>."
)
GONE = "That reminder is gone."
BAD_RULE = (
    "That reminder's repeat rule cannot be worked out, so nothing was changed. Cancel it in "
    "/reminders and set it again."
)


def press_data(press: Press, number: int, page: int | None = None) -> str:
    """Return a button's callback data: the press, the reminder id (or page) and the page."""
    return callback_data("r", press.value, number, *([] if page is None else [page]))


def parse_press(data: str | None) -> tuple[Press, int, int] | None:
    """Read a reminder button's data, or None when it is not well formed."""
    match = _DATA.fullmatch(data or "")
    if match is None:
        return None
    return Press(match[1]), int(match[2]), int(match[3] or 1)


def when_text(reminder: ReminderRecord, now: datetime) -> str:
    """Say when a reminder fires next, in its zone (and that a gap moved it, if one did)."""
    if reminder.next_fire_at is None:
        return "not again"
    zone = ZoneInfo(reminder.zone)
    try:
        occurrence = reminder.schedule.occurrence_at(reminder.next_fire_at)
    except TimingError:
        # A rule stored before rules were checked: its time still shows, as it is.
        occurrence = place(reminder.next_fire_at.astimezone(zone).replace(tzinfo=None), zone)
    return describe(occurrence, zone, now)


def occurrence_text(zone_name: str, occurrence: Occurrence | None, now: datetime) -> str:
    """Say when an occurrence fires, in its zone; None says it does not fire again."""
    if occurrence is None:
        return "not again"
    return describe(occurrence, ZoneInfo(zone_name), now)


def fired(reminder: ReminderRecord, due: datetime | None, late: bool) -> View:
    """Build the message of a fired reminder, with its buttons."""
    text = f"⏰ {html.escape(reminder.text)}"
    if late and due is not None:
        text += f"\n<i>(was due {due.astimezone(ZoneInfo(reminder.zone)):%a %d %b, %H:%M})</i>"
    first = (
        Button("Done", press_data(Press.DONE, reminder.id)),
        Button("+10 min", press_data(Press.TEN_MINUTES, reminder.id)),
        Button("+1 hour", press_data(Press.HOUR, reminder.id)),
        Button("Tomorrow", press_data(Press.TOMORROW, reminder.id)),
    )
    if not reminder.repeats:
        return View(text, (first,))
    second = (
        Button("Skip next", press_data(Press.SKIP_NEXT, reminder.id)),
        Button("Stop", press_data(Press.STOP, reminder.id)),
    )
    return View(text, (first, second))


def missed(reminders: Sequence[ReminderRecord]) -> str:
    """Tell a chat, once, which one-offs came due while the bot was down too long."""
    lines = [f"• {html.escape(r.text)} (was due {_due(r)})" for r in reminders]
    return (
        "While I was offline, these reminders came due more than a day ago, so I did not send "
        "them:\n" + "\n".join(lines) + "\n/reminders lists them."
    )


def _due(reminder: ReminderRecord) -> str:
    """Say when a reminder was due, in its zone."""
    if reminder.next_fire_at is None:
        return "earlier"
    zone = ZoneInfo(reminder.zone)
    return (
        f"{reminder.next_fire_at.astimezone(zone):%a %d %b, %H:%M} ({html.escape(reminder.zone)})"
    )


def _line(reminder: ReminderRecord, now: datetime) -> str:
    """Return one reminder's line in /reminders."""
    kind = " <i>(check-in: I answer it with the model)</i>" if reminder.check_in else ""
    repeat = f" <i>(repeats {html.escape(reminder.rule)})</i>" if reminder.rule else ""
    paused = (
        " <i>(paused: you had blocked me; set it again to resume)</i>"
        if (reminder.state == "paused")
        else ""
    )
    return (
        f"• <b>{html.escape(reminder.text)}</b>{kind}{repeat}{paused}\n"
        f"  {html.escape(when_text(reminder, now))}"
    )


def page(
    reminders: Sequence[ReminderRecord],
    total: int,
    number: int,
    now: datetime,
    missed_ones: Sequence[ReminderRecord] = (),
) -> View:
    """Build one page of /reminders: the next ones, each with Cancel, and Prev/Next."""
    pages = max(1, -(-total // PER_PAGE))
    if not reminders:
        text = "No reminders. Ask me, e.g. <i>remind me on Friday at 9 to call Sarah</i>."
    else:
        header = f"<b>Reminders</b> ({total})" + (f", page {number}/{pages}" if pages > 1 else "")
        text = header + "\n\n" + "\n".join(_line(r, now) for r in reminders)
    if missed_ones:
        gone = "\n".join(f"• {html.escape(r.text)}" for r in missed_ones)
        text += f"\n\n<b>Missed while I was offline</b>\n{gone}"
    rows: list[tuple[Button, ...]] = [
        (Button(f"Cancel: {_label(r.text)}", press_data(Press.CANCEL, r.id, number)),)
        for r in reminders
    ]
    moves = []
    if number > 1:
        moves.append(Button("< Prev", press_data(Press.PAGE, number - 1)))
    if number < pages:
        moves.append(Button("Next >", press_data(Press.PAGE, number + 1)))
    if moves:
        rows.append(tuple(moves))
    return View(text, tuple(rows))


def _label(text: str) -> str:
    """Shorten a reminder's text for a button."""
    flat = " ".join(text.split())
    return flat if len(flat) <= 24 else flat[:23] + "…"


def zone_shown(zone: str | None, now: datetime) -> str:
    """Say which zone is set, and the time there."""
    if zone is None:
        return ZONE_UNKNOWN
    return (
        f"Your time zone is <b>{html.escape(zone)}</b>; it is "
        f"{now.astimezone(ZoneInfo(zone)):%a %d %b, %H:%M} there. "
        "Change it with <code>/timezone</code> and a city."
    )


def zone_unknown(said: str) -> str:
    """Say that a zone name was not understood."""
    return (
        f"I don't know the time zone {html.escape(said[:64])!s}. Try a big city near you "
        "(<code>/timezone Berlin</code>) or a name like <code>Europe/Berlin</code>."
    )
