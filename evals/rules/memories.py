"""Rules about the owner's memories when the trial ends."""

from dataclasses import dataclass

from evals.rules.base import search, short
from evals.transcript import Transcript
from memory.items import MemoryItem


def _listing(items: list[MemoryItem]) -> str:
    """Show memories' contents briefly, for a reason."""
    return short("; ".join(item.content for item in items) or "none")


@dataclass(frozen=True)
class MemoryCount:
    """Exactly this many memories are active at the end."""

    count: int
    note: str = ""

    @property
    def label(self) -> str:
        noun = "memory" if self.count == 1 else "memories"
        return self.note or f"exactly {self.count} active {noun} at the end"

    def check(self, transcript: Transcript) -> str | None:
        active = transcript.active
        if len(active) == self.count:
            return None
        return f"{len(active)} active: {_listing(active)}"


@dataclass(frozen=True)
class HasMemory:
    """An active memory's content matches the regex (and its category and subject, if given)."""

    content: str
    category: str | None = None
    subject: str | None = None
    note: str = ""

    @property
    def label(self) -> str:
        extra = "".join(
            f", {name} {value}"
            for name, value in (("category", self.category), ("subject", self.subject))
            if value
        )
        return self.note or f"a memory matches /{self.content}/{extra}"

    def _matches(self, item: MemoryItem) -> bool:
        """Tell whether a memory matches the content, category and subject given."""
        if self.category and item.category.value != self.category:
            return False
        if self.subject and (item.subject or "").casefold() != self.subject.casefold():
            return False
        return search(self.content, item.content)

    def check(self, transcript: Transcript) -> str | None:
        active = transcript.active
        if any(self._matches(item) for item in active):
            return None
        return f"none does; active: {_listing(active)}"


@dataclass(frozen=True)
class NoMemory:
    """No active memory's content matches the regex."""

    content: str
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"no memory matches /{self.content}/"

    def check(self, transcript: Transcript) -> str | None:
        found = [item for item in transcript.active if search(self.content, item.content)]
        return f"found: {_listing(found)}" if found else None


def _seed(transcript: Transcript, key: str) -> MemoryItem | None:
    """Return the seeded memory as it ended, forgotten or not."""
    memory_id = transcript.seeds[key]
    return next((r.item for r in transcript.memories if r.item.id == memory_id), None)


@dataclass(frozen=True)
class SeedUpdated:
    """The seeded memory is still active under its id, with a new version matching the regex."""

    key: str
    content: str
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"seed '{self.key}' updated in place to match /{self.content}/"

    def check(self, transcript: Transcript) -> str | None:
        item = _seed(transcript, self.key)
        if item is None or item.deleted_at is not None:
            return f"seed '{self.key}' is no longer active"
        if item.version < 2:
            return f"seed '{self.key}' was not updated"
        if not search(self.content, item.content):
            return f"seed '{self.key}' now says: {short(item.content)}"
        return None


@dataclass(frozen=True)
class SeedKept:
    """The seeded memory is active and unchanged."""

    key: str
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"seed '{self.key}' kept unchanged"

    def check(self, transcript: Transcript) -> str | None:
        item = _seed(transcript, self.key)
        if item is None or item.deleted_at is not None:
            return f"seed '{self.key}' was forgotten"
        return None if item.version == 1 else f"seed '{self.key}' now says: {short(item.content)}"
