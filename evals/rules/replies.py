"""Rules about what the bot answered: patterns it must or must not contain, its questions."""

from dataclasses import dataclass

from evals.rules.base import search, short, turn_number, turn_words
from evals.transcript import Transcript


def reply_of(transcript: Transcript, turn: int) -> str | None:
    """Return the reply to a turn, or None when the trial never got that far."""
    index = turn_number(turn, len(transcript.replies)) - 1
    return transcript.replies[index]


@dataclass(frozen=True)
class Says:
    """The reply matches the case-insensitive regex."""

    pattern: str
    turn: int = -1
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"reply matches /{self.pattern}/{turn_words(self.turn)}"

    def check(self, transcript: Transcript) -> str | None:
        reply = reply_of(transcript, self.turn)
        if reply is None:
            return "no reply"
        return None if search(self.pattern, reply) else f"reply: {short(reply)}"


@dataclass(frozen=True)
class DoesNotSay:
    """The reply does not match the case-insensitive regex."""

    pattern: str
    turn: int = -1
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"reply does not match /{self.pattern}/{turn_words(self.turn)}"

    def check(self, transcript: Transcript) -> str | None:
        reply = reply_of(transcript, self.turn)
        if reply is None:
            return "no reply"
        return f"reply: {short(reply)}" if search(self.pattern, reply) else None


@dataclass(frozen=True)
class AsksQuestion:
    """The reply asks something: it has a question mark."""

    turn: int = -1
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"asks a question{turn_words(self.turn)}"

    def check(self, transcript: Transcript) -> str | None:
        reply = reply_of(transcript, self.turn)
        if reply is None:
            return "no reply"
        return None if "?" in reply else f"no question: {short(reply)}"


@dataclass(frozen=True)
class Questions:
    """The reply asks exactly this many questions (counted by question marks)."""

    count: int
    turn: int = -1
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"asks exactly {self.count} question(s){turn_words(self.turn)}"

    def check(self, transcript: Transcript) -> str | None:
        reply = reply_of(transcript, self.turn)
        if reply is None:
            return "no reply"
        asked = reply.count("?")
        return None if asked == self.count else f"{asked} question marks: {short(reply)}"
