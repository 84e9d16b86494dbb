"""What a case is: seeded memories, a fixed clock, the user's turns, settings knobs and rules.

Turns are numbered from 1, as a reader counts messages; rules may count from the end with -1.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from memory.categories import Category

if TYPE_CHECKING:
    from evals.judge import Judged
    from evals.rules.base import Rule

# A private chat's owner is the user (the chat id is the user id); a group's is the group.
PRIVATE_OWNER = 424_242
GROUP_OWNER = -100_424_242
ZONE = "Europe/Berlin"
# A Wednesday morning: the date line of every message unless a case sets its own clock.
DEFAULT_NOW = datetime(2026, 3, 11, 9, 30, tzinfo=ZoneInfo(ZONE))

# A tap of a fact's toggle: "Toggle 2" flips the second fact of the newest question.
TOGGLE = "Toggle "


@dataclass(frozen=True)
class Seed:
    """A memory that exists before the case starts; rules name it by its key."""

    key: str
    content: str
    category: Category
    subject: str | None = None


@dataclass(frozen=True)
class Turn:
    """One message: from the user, or in a group from a named member; maybe forwarded or spoken."""

    text: str
    sender: str | None = None
    new_conversation: bool = False  # the conversation before it ends first, as after /new
    forwarded_from: str | None = None  # the user forwards someone else's message
    # "Remember" or "No": instead of writing, the user taps that button under the newest
    # memory question (propose_memory); the bot answers it without a model call. "Toggle 2"
    # flips the toggle of its second fact.
    tap: str | None = None
    voice: bool = False  # the text is a voice note's transcript, marked as one
    quote: str | None = None  # the message the user replies to, quoted in the turn
    quote_author: str | None = None  # who wrote the quoted message
    image: str | None = None  # sent with a picture (PNG) whose only content is this text
    pdf: str | None = None  # sent with a one-page PDF whose only content is this text


@dataclass(frozen=True)
class Case:
    """One situation, the knobs it needs, and the rules its trials are scored by."""

    name: str
    about: str
    turns: tuple[Turn, ...]
    rules: tuple[Rule, ...]
    must_pass: bool = False
    every_trial: bool = False  # a secret saved once is one time too many: no 2 of 3
    seeds: tuple[Seed, ...] = ()
    now: datetime = DEFAULT_NOW
    memory_on: bool = True
    history_token_budget: int | None = None  # None: the bot's default
    memory_token_budget: int | None = None  # None: the bot's default
    judged: tuple[Judged, ...] = ()
    requires_tools: tuple[str, ...] = ()  # skipped, not failed, while the bot lacks one
    zone_known: bool = True  # the owner's time zone (now's) is set before the trial
    web_tools: bool = True  # WEB_TOOLS=off when False
    memory_limit: int | None = None  # MEMORY_MAX_ITEMS; None: the bot's default

    @property
    def group(self) -> bool:
        """Tell whether this is a group chat: its turns name their senders."""
        return any(turn.sender for turn in self.turns)

    @property
    def owner_id(self) -> int:
        """Return the memory owner, who is also the chat."""
        return GROUP_OWNER if self.group else PRIVATE_OWNER


def said(*messages: str | Turn) -> tuple[Turn, ...]:
    """Return turns from plain strings (the user's messages) and Turns."""
    return tuple(Turn(m) if isinstance(m, str) else m for m in messages)


def member_id(name: str) -> int:
    """Return a group member's Telegram user id in a trial: the same for the same name."""
    return 1_000 + sum(ord(c) * 31**i for i, c in enumerate(name)) % 1_000_000
