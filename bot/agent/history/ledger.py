"""The memory changes of the turns compaction folds away, listed by code, word for word.

The memory block is made when a conversation starts, so what the model saves, updates or
forgets later exists only in its tool results; once compaction folds those away, a summariser
could drop or garble an id, and the model would then add a duplicate or ask again. So every
summary ends with this list, made from the writes stored with the tool results (never read
back out of their wording) and stored apart from the prose; each compaction carries the
previous list over before adding its own.
"""

from collections.abc import Iterable, Sequence

from bot.conversations.snapshot import MemoryWrite, StoredTurn
from memory.block import quoted
from memory.items import ChangeKind, MemoryChange

# A line of its own that no line of the list can equal (each of those starts "- ").
LEDGER_HEADING = (
    "Memory changes made earlier in this conversation, from your tool results (the memory "
    "block does not show them; use these ids):"
)


def memory_write(tool_use_id: str, change: MemoryChange) -> MemoryWrite:
    """Return what a tool call's change is stored as, with the turn of its result."""
    item = change.item
    return {
        "tool_use_id": tool_use_id,
        "kind": change.kind.value,
        "memory_id": item.id,
        "subject": item.subject,
        "content": item.content,
    }


def _change_line(write: MemoryWrite) -> str:
    """Return the list's line for one stored write."""
    memory_id, content = write["memory_id"], quoted(write["content"])
    kind = ChangeKind(write["kind"])
    if kind is ChangeKind.ADDED:
        subject = write["subject"]
        about = f"{quoted(subject)}: " if subject else ""
        return f"- saved [id:{memory_id}] {about}{content}"
    if kind is ChangeKind.UPDATED:
        return f"- updated [id:{memory_id}] to {content}"
    return f"- forgot [id:{memory_id}] {content}"


def memory_changes(turns: Sequence[StoredTurn]) -> list[str]:
    """Return a line per memory saved, updated or forgotten in the turns, in order."""
    return [_change_line(write) for turn in turns for write in turn.memory_writes]


def join_summary(prose: str | None, changes: Iterable[str]) -> str | None:
    """Return the summary the model reads: the prose, then the list of changes if any."""
    listed = list(changes)
    ledger = "\n".join([LEDGER_HEADING, *listed]) if listed else ""
    return "\n\n".join(part for part in (prose, ledger) if part) or None
