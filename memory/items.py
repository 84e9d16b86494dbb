"""What the memory store hands out: plain values, the kinds of change, and its exceptions."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from memory.categories import Category


class ChangeKind(StrEnum):
    """A write the model made to a memory, as the undo log and the notices name it."""

    ADDED = "added"
    UPDATED = "updated"
    FORGOTTEN = "forgotten"


class ProposalStatus(StrEnum):
    """Where a memory the model proposed stands: waiting for the user, or answered."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    # It can no longer be saved as proposed (a memory with its subject came first).
    EXPIRED = "expired"


class UndoRefusal(StrEnum):
    """Why a change cannot be undone without losing something newer."""

    DELETED = "deleted"
    CHANGED = "changed"
    RESTORED = "restored"
    # Bringing a forgotten memory back would pass MEMORY_MAX_ITEMS.
    FULL = "full"


class MemoryAtLimit(Exception):
    """The owner has as many active memories as allowed: none can come back."""

    def __init__(self, limit: int):
        super().__init__(f"at most {limit} memories")
        self.limit = limit


@dataclass(frozen=True)
class MemoryItem:
    """A memory as callers see it: its current content and where it stands."""

    id: str
    owner_id: int
    category: Category
    subject: str | None
    content: str
    version: int
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None = None
    pinned: bool = False


@dataclass(frozen=True)
class MemoryVersionItem:
    """One stored version of a memory's content."""

    version_number: int
    content: str
    created_at: datetime
    source_conversation_id: int | None


@dataclass(frozen=True)
class MemoryRecord:
    """A memory with every version of its content, oldest first."""

    item: MemoryItem
    versions: list[MemoryVersionItem]


@dataclass(frozen=True)
class UndoResult:
    """What an undo did: the kind of change undone and the memory before and after."""

    kind: ChangeKind
    before: MemoryItem
    after: MemoryItem


class MemoryNotFound(LookupError):
    """No memory with that id belongs to this owner (or none that is active, where that counts)."""

    def __init__(self, memory_id: str):
        super().__init__(memory_id)
        self.memory_id = memory_id


class MemoryNotDeleted(Exception):
    """The memory to restore is not deleted."""

    def __init__(self, memory_id: str):
        super().__init__(memory_id)
        self.memory_id = memory_id


class ChangeNotFound(LookupError):
    """No recorded change with that id belongs to this owner."""


class AlreadyUndone(Exception):
    """The change was undone before; undo works once."""


class CannotUndo(Exception):
    """The memory changed after the change was made, so undoing it would lose something."""

    def __init__(self, reason: UndoRefusal):
        super().__init__(reason)
        self.reason = reason


def normalize_subject(subject: str | None) -> str | None:
    """Fold a subject's spacing to single spaces; a blank subject is no subject."""
    return " ".join(subject.split()) or None if subject else None


def subject_key(subject: str | None) -> str | None:
    """Return a subject as compared: spacing folded, case folded in any script."""
    return " ".join(subject.split()).casefold() if subject else None


def find_by_subject(items: Iterable[MemoryItem], subject: str) -> MemoryItem | None:
    """Return the memory with this subject, ignoring spacing and case in any script."""
    wanted = subject_key(subject)
    return next((i for i in items if i.subject and subject_key(i.subject) == wanted), None)


@dataclass(frozen=True)
class AddMemory:
    """Save a new memory."""

    content: str
    category: Category
    subject: str | None = None


@dataclass(frozen=True)
class UpdateMemory:
    """Append a version with new content to a memory."""

    memory_id: str
    content: str


@dataclass(frozen=True)
class ForgetMemory:
    """Soft-delete a memory."""

    memory_id: str


Edit = AddMemory | UpdateMemory | ForgetMemory


@dataclass(frozen=True)
class MemoryChange:
    """A write to a memory: its kind, the memory after it (and before, for an update)."""

    kind: ChangeKind
    item: MemoryItem
    previous: MemoryItem | None = None
    # The undo log entry of a change the model made, for an Undo button.
    change_id: int | None = None
    # Memories the change moved out of the prompt's block into the archive.
    archived: tuple[MemoryItem, ...] = ()
