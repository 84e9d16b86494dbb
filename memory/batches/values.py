"""What a batch of memory changes is: its kinds, states, lines, and what applying one did."""

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from memory.items import MemoryItem
from memory.plan_lines import BatchLine


class BatchKind(StrEnum):
    """Where a batch came from."""

    TIDY = "tidy"
    IMPORT = "import"
    # An Undo all (or a Redo all, which undoes an Undo all).
    REVERT = "revert"


class BatchState(StrEnum):
    """Where a batch stands."""

    PROPOSED = "proposed"
    APPLIED = "applied"
    CANCELLED = "cancelled"
    # The plan broke a rule: nothing of it was applied.
    REJECTED = "rejected"
    # The pass found nothing to change.
    EMPTY = "empty"


class BatchNotFound(LookupError):
    """No batch with that id belongs to this owner."""


class BatchDecided(Exception):
    """The batch was applied, cancelled or undone before: a stale tap."""


class BatchStale(Exception):
    """A memory the plan changes has changed since the plan was made: nothing was applied."""


class BatchTooBig(Exception):
    """Applying the batch would pass the owner's limit of active memories."""

    def __init__(self, limit: int):
        super().__init__(limit)
        self.limit = limit


@dataclass(frozen=True)
class Batch:
    """A batch as its message shows it: its lines, each possibly skipped."""

    id: int
    owner_id: int
    kind: BatchKind
    state: BatchState
    lines: list[BatchLine]
    undone: bool = False
    reverts_id: int | None = None

    @property
    def chosen(self) -> list[BatchLine]:
        """Return the lines not skipped."""
        return [line for line in self.lines if not line.skip]


@dataclass(frozen=True)
class Reverted:
    """What an Undo all (or Redo all) did: its own batch, and the memories it left alone."""

    batch_id: int
    restored: int
    left_alone: list[MemoryItem] = field(default_factory=list)


@dataclass(frozen=True)
class BatchNote:
    """What one batch did to one memory, for its history."""

    batch_id: int
    kind: BatchKind
    version: int
    archived: bool
    reason: str | None


def digest_of(items: Iterable[MemoryItem]) -> str:
    """Return a fingerprint of active memories: it changes whenever any of them does."""
    hashed = hashlib.sha256()
    for item in sorted(items, key=lambda i: i.id):
        hashed.update(f"{item.id}:{item.version}:{int(item.pinned)};".encode())
    return hashed.hexdigest()
