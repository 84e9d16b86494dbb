"""Rules about the tool calls the model made: required, forbidden, their arguments."""

from dataclasses import dataclass
from typing import Any

from evals.rules.base import search, short, turn_number, turn_words
from evals.transcript import ToolCall, Transcript

WRITES = ("add_to_memory", "update_memory", "forget_memory")
# A memory_id predicate meaning: an id this trial's own add_to_memory was told it saved.
CREATED = "<created in this trial>"


def facts_of(arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Return a call's facts: propose_memory's list of them, else the arguments themselves."""
    facts = arguments.get("facts")
    return [f for f in facts if isinstance(f, dict)] if isinstance(facts, list) else [arguments]


def calls_in(transcript: Transcript, turn: int | None, names: tuple[str, ...]) -> list[ToolCall]:
    """Return the calls of these tools, in one turn or in all."""
    wanted = None if turn is None else turn_number(turn, len(transcript.replies))
    return [c for c in transcript.calls if c.name in names and wanted in (None, c.turn)]


def _describe(call: ToolCall) -> str:
    """Show a call briefly, for a reason."""
    return short(f"{call.name}({call.input})" + (" -> error" if call.is_error else ""))


@dataclass(frozen=True)
class Called:
    """The tool was called, successfully, with arguments that match every given predicate.

    category is compared exactly, subject case-folded, subject_like, content and query as
    regexes; memory_id names a seed by its key, or is CREATED.
    """

    tool: str
    turn: int | None = None
    category: str | None = None
    subject: str | None = None
    subject_like: str | None = None
    content: str | None = None
    memory_id: str | None = None
    query: str | None = None
    # Other arguments (a reminder's, or a question's about), each a regex its value as text
    # must match: a fact's own, else the call's (propose_memory's about is the call's).
    arguments: tuple[tuple[str, str], ...] = ()
    note: str = ""

    @property
    def label(self) -> str:
        predicates = {
            "category": self.category,
            "subject": self.subject,
            "subject~": self.subject_like,
            "content~": self.content,
            "memory_id": self.memory_id,
            "query~": self.query,
            **{f"{name}~": pattern for name, pattern in self.arguments},
        }
        shown = ", ".join(f"{k}={v}" for k, v in predicates.items() if v is not None)
        arguments = f"({shown})" if shown else ""
        return self.note or f"calls {self.tool}{arguments}{turn_words(self.turn)}"

    def _matches(self, call: ToolCall, transcript: Transcript) -> bool:
        """Tell whether a call succeeded with arguments (or one fact of them) that match."""
        return not call.is_error and any(
            self._args_match(call.input | args, transcript) for args in facts_of(call.input)
        )

    def _args_match(self, args: dict[str, Any], transcript: Transcript) -> bool:
        """Tell whether one set of arguments matches every predicate."""
        if self.category and args.get("category") != self.category:
            return False
        subject = str(args.get("subject") or "").casefold()
        if self.subject is not None and subject != self.subject.casefold():
            return False
        if self.subject_like and not search(self.subject_like, subject):
            return False
        if self.content and not search(self.content, str(args.get("content", ""))):
            return False
        if self.query and not search(self.query, str(args.get("query", ""))):
            return False
        if any(not search(pattern, str(args.get(name, ""))) for name, pattern in self.arguments):
            return False
        if self.memory_id is None:
            return True
        if self.memory_id == CREATED:
            return args.get("memory_id") in transcript.created_ids
        return args.get("memory_id") == transcript.seeds[self.memory_id]

    def check(self, transcript: Transcript) -> str | None:
        calls = calls_in(transcript, self.turn, (self.tool,))
        if not calls:
            return f"{self.tool} was not called{turn_words(self.turn)}"
        if any(self._matches(call, transcript) for call in calls):
            return None
        return "no call matched: " + "; ".join(_describe(call) for call in calls[:2])


@dataclass(frozen=True)
class NotCalled:
    """The tool was not called at all (in the turn, or in any)."""

    tool: str
    turn: int | None = None
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"does not call {self.tool}{turn_words(self.turn)}"

    def check(self, transcript: Transcript) -> str | None:
        calls = calls_in(transcript, self.turn, (self.tool,))
        return f"called {_describe(calls[0])}" if calls else None


@dataclass(frozen=True)
class NoWrites:
    """No memory was added, updated or forgotten by the model (in the turn, or in any)."""

    turn: int | None = None
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"writes no memory{turn_words(self.turn)}"

    def check(self, transcript: Transcript) -> str | None:
        calls = calls_in(transcript, self.turn, WRITES)
        return f"called {_describe(calls[0])}" if calls else None


@dataclass(frozen=True)
class AtMost:
    """The tool was called at most this many times (in the turn, or in all)."""

    tool: str
    times: int
    turn: int | None = None
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"calls {self.tool} at most {self.times}x{turn_words(self.turn)}"

    def check(self, transcript: Transcript) -> str | None:
        count = len(calls_in(transcript, self.turn, (self.tool,)))
        return f"called {self.tool} {count} times" if count > self.times else None


@dataclass(frozen=True)
class SavedWithSubject:
    """Every add_to_memory call that saved gave a subject, and at least one saved."""

    note: str = ""

    @property
    def label(self) -> str:
        return self.note or "every memory saved has a subject"

    def check(self, transcript: Transcript) -> str | None:
        saves = [call for call in transcript.calls if call.saved_id]
        if not saves:
            return "add_to_memory saved nothing"
        bare = [call for call in saves if not str(call.input.get("subject") or "").strip()]
        return f"no subject: {_describe(bare[0])}" if bare else None
