"""Whose words a stored user's turn holds: its sender, a forward's author, a quoted message's.

Stored with the turn (conversation_turns.said_by, migration 0010), so a search result that
shows a few words of it still says whose they are: "Mallory"'s words forwarded by the user,
"Bob" said, not "the user said". The turn's text has them too, but an excerpt cuts them off.
"""

import re
from dataclasses import asdict, dataclass, fields
from typing import Any

from bot.conversations.blocks import Content
from memory.block import quoted

# A name in a search result is one quoted line of at most this many characters.
NAME_CHARACTERS = 64
# The time line a group member's turn opens with: "[Monday, 23 November 2026, 10:00 UTC; from
# Bob]". Its date has no ";", so the first "; from " starts the name.
_TIME_LINE_SPEAKER = re.compile(r"\[[^;\n]*; from (.+)\]")


@dataclass(frozen=True)
class SaidBy:
    """Who a user's turn speaks for, beyond the user: as its text was written for the model."""

    # The group member who sent it (None in a private chat: the user).
    speaker: str | None = None
    # Whose words a forward carries.
    forwarded_from: str | None = None
    # Whose message it replies to, with the text quoted: a name, "" if unknown.
    reply_to: str | None = None
    reply_to_bot: bool = False
    # Lines of the quote, after the "[In reply to ...:]" line.
    quote_lines: int = 0

    def stored(self) -> dict[str, Any] | None:
        """Return what the turn's said_by column holds: only what differs from a plain turn."""
        plain = SaidBy()
        values = {k: v for k, v in asdict(self).items() if v != getattr(plain, k)}
        return values or None

    @classmethod
    def of_stored(cls, values: dict[str, Any] | None) -> "SaidBy":
        """Read a said_by column (None: the user's own words, or a turn from before 0010)."""
        known = {field.name for field in fields(cls)}
        return cls(**{k: v for k, v in (values or {}).items() if k in known})


def said_by_of(stored: dict[str, Any] | None, content: Content) -> SaidBy:
    """Read a user's turn's said_by column, or for a turn from before it, its time line's sender.

    The time line is written by the bot, so the name it gives is the sender's.
    """
    if stored is not None:
        return SaidBy.of_stored(stored)
    first = next((block.get("text", "") for block in content if block.get("type") == "text"), "")
    named = _TIME_LINE_SPEAKER.fullmatch(str(first).partition("\n")[0])
    return SaidBy(speaker=named.group(1) if named else None)


def _name(name: str) -> str:
    """Return a name as one quoted line, so no name can pass for "the user" or for structure."""
    line = " ".join(name.split())
    return quoted(line if len(line) <= NAME_CHARACTERS else line[: NAME_CHARACTERS - 1] + "…")


def who_said(role: str, said_by: SaidBy) -> str:
    """Say whose words a turn holds: "you said", "the user said", "Bob" said, a forward's."""
    if role != "user":
        return "you said"
    sender = "the user" if said_by.speaker is None else _name(said_by.speaker)
    if said_by.forwarded_from is not None:
        who = f"{_name(said_by.forwarded_from)}'s words, forwarded by {sender}"
    else:
        who = f"{sender} said"
    if said_by.reply_to is None:
        return who
    if said_by.reply_to_bot:
        return f"{who}, replying to your message"
    replied = f"{_name(said_by.reply_to)}'s message" if said_by.reply_to else "a message"
    return f"{who}, replying to {replied}"


def split_words(text: str, said_by: SaidBy) -> tuple[str, str]:
    """Split a user's turn's words (after its time line) into its own and the quoted ones.

    Its own are what the sender wrote, or what a forward carries, without our notes.
    """
    lines = text.split("\n")
    quote: list[str] = []
    if said_by.reply_to is not None:
        quote, lines = lines[1 : 1 + said_by.quote_lines], lines[1 + said_by.quote_lines :]
    if said_by.forwarded_from is not None:
        lines = [line.removeprefix("> ") for line in lines[1:]]
    return "\n".join(lines), "\n".join(line.removeprefix("> ") for line in quote)
