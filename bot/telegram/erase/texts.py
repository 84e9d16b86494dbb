"""What /delete_my_data says (HTML), and its question's buttons: pure builders."""

import re
from dataclasses import dataclass
from enum import StrEnum

from bot.telegram.ui import Button, View, callback_data
from bot.upkeep.erasure import Erased, Holdings

# /memory off or on that came while everything was being deleted: not made after it.
SWITCH_DURING_DELETION = (
    "That came while I was deleting everything I kept here, so I did not change it: memory "
    "is on, as after every deletion. Send it again to change it."
)
# Our buttons' data start so; bot/telegram/callbacks.py's namespaces are others.
PREFIX = "e:"
_DATA = re.compile(r"e:([yxn]):([1-9][0-9]{0,19}):([1-9][0-9]{0,11})")


class Choice(StrEnum):
    """A button of the question."""

    CONFIRM = "y"
    EXPORT = "x"
    CANCEL = "n"


@dataclass(frozen=True)
class Answer:
    """A press on the question: the choice, who asked, and when (Unix seconds)."""

    choice: Choice
    asker: int
    asked_at: int


def encode(answer: Answer) -> str:
    """Return a button's callback data (at most 38 bytes, well under Telegram's 64)."""
    return callback_data("e", answer.choice.value, answer.asker, answer.asked_at)


def parse(data: str | None) -> Answer | None:
    """Return the answer a button's data stands for, or None if it is not one."""
    match = _DATA.fullmatch(data or "")
    if match is None:
        return None
    return Answer(Choice(match[1]), int(match[2]), int(match[3]))


def _count(number: int, one: str, many: str) -> str:
    """Say a count with its noun: "1 memory", "3 memories"."""
    return f"{number} {one if number == 1 else many}"


def _holdings(held: Holdings) -> str:
    """List what is kept, counted."""
    return (
        f"{_count(held.memories, 'memory', 'memories')} with all their versions, "
        f"{_count(held.conversations, 'conversation', 'conversations')} with every message, "
        f"{_count(held.reminders, 'reminder', 'reminders')}"
    )


def question(held: Holdings, group: bool, asker: int, asked_at: int) -> View:
    """Ask before deleting everything, offering an export of the memories first."""
    whose = "this group" if group else "you"
    text = (
        f"<b>Delete everything I keep for {whose}?</b>\n\n"
        f"This deletes {_holdings(held)}, the time zone and memory settings, and my copies "
        "of the files sent here.\n\n"
        "<b>This cannot be undone.</b> To keep your memories, export them first: tap "
        "<b>Export memories first</b> or send /memory export."
    )
    if group:
        text += "\n\nOnly the admin who asked can confirm."

    def button(label: str, choice: Choice) -> Button:
        return Button(label, encode(Answer(choice, asker, asked_at)))

    rows: list[tuple[Button, ...]] = []
    if held.memories:
        rows.append((button("Export memories first", Choice.EXPORT),))
    rows.append((button("Delete everything", Choice.CONFIRM), button("Cancel", Choice.CANCEL)))
    return View(text, tuple(rows))


def deleted(erased: Erased, group: bool) -> View:
    """Say what was deleted, and that it is gone for good."""
    whose = "this group" if group else "you"
    files = _count(erased.files, "cached file", "cached files")
    return View(
        f"Deleted everything I kept for {whose}: {_holdings(erased.held)}, and {files}. "
        "<b>This cannot be undone.</b>\n\nThe next message starts afresh, with memory on."
    )


NOTHING_KEPT = "I keep nothing for you here: no memories, conversations or reminders."
NOTHING_KEPT_GROUP = "I keep nothing for this group: no memories, conversations or reminders."
CANCELLED = View("Cancelled: nothing was deleted.")
EXPIRED = View("This question expired, and nothing was deleted. Send /delete_my_data again.")
NOT_ADMIN = "Only this group's admins can delete what I keep for it."
ADMIN_UNKNOWN = "I couldn't check that you're an admin of this group. Please try again."
# Alerts on a pressed button (answerCallbackQuery: at most 200 characters).
EXPIRED_ALERT = "This question expired; nothing was deleted. Send /delete_my_data again."
NOT_ASKER_ALERT = "Only the one who asked can answer this. Send /delete_my_data yourself."
NOT_ADMIN_ALERT = "Only this group's admins can delete what I keep for it."
ALREADY_DELETED_ALERT = "Already deleted: I keep nothing for this chat now."
