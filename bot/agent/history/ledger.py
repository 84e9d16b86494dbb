"""The memory changes of the turns compaction folds away, listed by code, word for word.

The memory block is made when a conversation starts, so what the model saves, updates or
forgets later exists only in its tool results; once compaction folds those away, a summariser
could drop or garble an id, and the model would then add a duplicate or ask again. So every
summary ends with this list, made from the writes stored with the tool results (never read
back out of their wording) and stored apart from the prose; each compaction carries the
previous list over before adding its own. The memory questions still open when it is made
are listed too (a yes after a compaction must find what it agrees to); an earlier
compaction's open ones are dropped first, as they may have been answered since.
"""

from collections.abc import Iterable, Sequence

from bot.conversations.snapshot import MemoryWrite, StoredTurn
from memory.block import quoted
from memory.items import ChangeKind, MemoryChange, ProposalStatus
from memory.proposals import Proposal

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


# How each open question's line starts: a later compaction drops these and lists anew.
OPEN_MARK = "- open memory question, waiting for the user's answer when this was written"


def open_question_lines(questions: Sequence[Proposal]) -> list[str]:
    """Return a line per fact of the questions still open: what a clear yes should call."""
    lines = []
    for question in questions:
        only = f"; only {question.about} can answer" if question.about else ""
        for fact in question.facts:
            if fact.status is not ProposalStatus.PENDING:
                continue
            if fact.target_id is not None:
                call = f"update_memory [id:{fact.target_id}] to {quoted(fact.content)}"
            else:
                about = f"{fact.category.value} {quoted(fact.subject)}"
                call = f"add_to_memory {about}: {quoted(fact.content)}"
            lines.append(f"{OPEN_MARK} (a clear yes: {call}{only})")
    return lines


def carried(changes: Iterable[str]) -> tuple[str, ...]:
    """Return an earlier list without its open questions (they may be answered by now)."""
    return tuple(line for line in changes if not line.startswith(OPEN_MARK))


def join_summary(prose: str | None, changes: Iterable[str]) -> str | None:
    """Return the summary the model reads: the prose, then the list of changes if any."""
    listed = list(changes)
    ledger = "\n".join([LEDGER_HEADING, *listed]) if listed else ""
    return "\n\n".join(part for part in (prose, ledger) if part) or None
