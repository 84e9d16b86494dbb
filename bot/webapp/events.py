"""What the Mini App changed, for the chat to announce with its Undo, as the commands do."""

from dataclasses import dataclass
from typing import Protocol

from bot.reminders.records import ReminderRecord
from memory.batches.values import Reverted
from memory.items import MemoryChange, MemoryItem, UndoResult


@dataclass(frozen=True)
class Changed:
    """A memory edited or deleted, logged for Undo."""

    change: MemoryChange


@dataclass(frozen=True)
class Pinned:
    """A memory pinned or unpinned."""

    item: MemoryItem
    pinned: bool


@dataclass(frozen=True)
class Restored:
    """A deleted memory brought back."""

    item: MemoryItem


@dataclass(frozen=True)
class Undone:
    """A logged change undone."""

    result: UndoResult


@dataclass(frozen=True)
class BatchReverted:
    """A batch undone whole (or an Undo all redone)."""

    result: Reverted
    redo: bool


@dataclass(frozen=True)
class ReminderChanged:
    """A reminder cancelled, or its next time skipped."""

    reminder: ReminderRecord
    cancelled: bool


Event = Changed | Pinned | Restored | Undone | BatchReverted | ReminderChanged


class Announcer(Protocol):
    """Tells the owner's private chat what the app changed; never fails the change."""

    async def tell(self, owner_id: int, event: Event) -> None:
        """Announce one change in the owner's chat."""
