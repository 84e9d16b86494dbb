"""What a rule is, one that holds when any of several does, and the helpers the kinds share."""

import re
from dataclasses import dataclass
from typing import Protocol

from evals.transcript import Transcript

SHORT = 90


class Rule(Protocol):
    """A property of a trial."""

    @property
    def label(self) -> str:
        """Say what the rule requires, for the report."""
        ...

    def check(self, transcript: Transcript) -> str | None:
        """Return None when the rule holds, else a short reason."""
        ...


def turn_number(turn: int, count: int) -> int:
    """Return the 1-based turn a rule names; -1 is the last of count turns."""
    return turn if turn > 0 else count + 1 + turn


def turn_words(turn: int | None) -> str:
    """Name a turn in a label: 'turn 2', 'the last turn', or nothing for every turn."""
    if turn is None:
        return ""
    if turn == -1:
        return " in the last turn"
    return f" in turn {turn}" if turn > 0 else f" in turn {turn} (from the end)"


def search(regex: str, text: str) -> bool:
    """Tell whether a case-insensitive regex occurs in text."""
    return re.search(regex, text, re.IGNORECASE) is not None


def short(value: object, limit: int = SHORT) -> str:
    """Return value as one line of at most limit characters, for a reason."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class AnyOf:
    """At least one of the rules holds: one behaviour the bot takes in several forms."""

    rules: tuple[Rule, ...]
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or " or ".join(rule.label for rule in self.rules)

    def check(self, transcript: Transcript) -> str | None:
        reasons = [rule.check(transcript) for rule in self.rules]
        if any(reason is None for reason in reasons):
            return None
        return "; ".join(str(reason) for reason in reasons)
