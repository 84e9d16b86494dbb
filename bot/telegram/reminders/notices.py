"""What a chat is told, once, when one of its reminders cannot be sent or scheduled."""

import html
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.reminders.due import RETRY_FOR
from bot.reminders.records import ReminderRecord


def _due(reminder: ReminderRecord) -> str:
    """Say when a reminder was due, in its zone (UTC when its zone is not known)."""
    if reminder.next_fire_at is None:
        return "earlier"
    try:
        zone, name = ZoneInfo(reminder.zone), reminder.zone
    except (ZoneInfoNotFoundError, ValueError):
        zone, name = ZoneInfo("UTC"), "UTC"
    return f"{reminder.next_fire_at.astimezone(zone):%a %d %b, %H:%M} ({html.escape(name)})"


def unsent(reminder: ReminderRecord) -> str:
    """Say that a reminder could not be sent, however often it was tried."""
    minutes = int(RETRY_FOR.total_seconds() // 60)
    return (
        f"I could not send you this reminder, due {_due(reminder)}: Telegram did not take it "
        f"for {minutes} minutes.\n<b>{html.escape(reminder.text)}</b>"
    )


def broken(reminder: ReminderRecord) -> str:
    """Say that a reminder could not be scheduled and was stopped."""
    return (
        "I could not work out when this reminder fires, so I stopped it. Set it again "
        f"(with another repeat) if you still want it.\n<b>{html.escape(reminder.text)}</b>"
    )
