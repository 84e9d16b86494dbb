"""Rules about what the bot answered: patterns it must or must not contain, its questions."""

import re
from dataclasses import dataclass

from evals.rules.base import search, short, turn_number, turn_words
from evals.rules.calls import calls_in, facts_of
from evals.transcript import Transcript

# A question: a run of text without a sentence end or line break, up to a question mark.
QUESTION = re.compile(r"[^.!?\n]*\?")


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


def questions(reply: str) -> list[str]:
    """Return the reply's questions: each run of text up to a question mark."""
    return [q.strip() for q in QUESTION.findall(reply)]


def asked_in(transcript: Transcript, turn: int, reply: str) -> list[str]:
    """Return the questions of a turn's reply, and its memory question with buttons, if any."""
    shown = [
        f"Remember this? {' '.join(str(f.get('content', '')) for f in facts_of(call.input))}"
        for call in calls_in(transcript, turn, ("propose_memory",))
        if not call.is_error
    ]
    return questions(reply) + shown


def _about(about: str | None) -> str:
    """Name what a question must be about, in a label."""
    return f" about /{about}/" if about else ""


@dataclass(frozen=True)
class AsksQuestion:
    """The reply asks a question (one matching the regex `about`, if given)."""

    turn: int = -1
    about: str | None = None
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"asks a question{_about(self.about)}{turn_words(self.turn)}"

    def check(self, transcript: Transcript) -> str | None:
        reply = reply_of(transcript, self.turn)
        if reply is None:
            return "no reply"
        asked = [
            q
            for q in asked_in(transcript, self.turn, reply)
            if self.about is None or search(self.about, q)
        ]
        return None if asked else f"no such question: {short(reply)}"


@dataclass(frozen=True)
class Questions:
    """The reply asks exactly this many questions (those matching `about`, if given)."""

    count: int
    turn: int = -1
    about: str | None = None
    note: str = ""

    @property
    def label(self) -> str:
        asks = f"asks exactly {self.count} question(s){_about(self.about)}"
        return self.note or f"{asks}{turn_words(self.turn)}"

    def check(self, transcript: Transcript) -> str | None:
        reply = reply_of(transcript, self.turn)
        if reply is None:
            return "no reply"
        asked = [
            q
            for q in asked_in(transcript, self.turn, reply)
            if self.about is None or search(self.about, q)
        ]
        if len(asked) == self.count:
            return None
        return f"{len(asked)}: {short(' | '.join(asked) or reply)}"


@dataclass(frozen=True)
class QuestionsOverall:
    """Across every reply, at most this many questions (those matching `about`, if given)."""

    most: int
    about: str | None = None
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"asks at most {self.most} question(s){_about(self.about)} in all"

    def check(self, transcript: Transcript) -> str | None:
        asked = [
            q
            for turn, reply in enumerate(transcript.replies, 1)
            if reply is not None
            for q in asked_in(transcript, turn, reply)
            if self.about is None or search(self.about, q)
        ]
        return None if len(asked) <= self.most else f"{len(asked)}: {short(' | '.join(asked))}"


def _said_by_model(transcript: Transcript) -> str:
    """Return every text the model wrote, markers and all, before the bot cut them out."""
    return "\n".join(
        block.get("text", "")
        for exchange in transcript.agent_exchanges
        for block in exchange.response.get("content", [])
        if block.get("type") == "text"
    )


@dataclass(frozen=True)
class Marks:
    """The model marked the seeded memory it used ([[mem:<id>]]), or (used=False) did not."""

    key: str
    used: bool = True
    note: str = ""

    @property
    def label(self) -> str:
        verb = "marks" if self.used else "does not mark"
        return self.note or f"{verb} the memory '{self.key}'"

    def check(self, transcript: Transcript) -> str | None:
        said = _said_by_model(transcript)
        if (f"[[mem:{transcript.seeds[self.key]}]]" in said) == self.used:
            return None
        return f"{'no' if self.used else 'a'} marker of '{self.key}' in: {short(said)}"


@dataclass(frozen=True)
class ShowsNoIds:
    """No reply shows the id of a seeded memory (ids only when asked about memories)."""

    note: str = ""

    @property
    def label(self) -> str:
        return self.note or "shows no memory id"

    def check(self, transcript: Transcript) -> str | None:
        for reply in transcript.replies:
            shown = [i for i in transcript.seeds.values() if reply is not None and i in reply]
            if shown:
                return f"shows {shown[0]}: {short(reply or '')}"
        return None
