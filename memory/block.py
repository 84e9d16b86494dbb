"""Render the memory block of the system prompt: same memories, same bytes."""

from collections.abc import Iterable
from itertools import groupby

from memory.items import MemoryItem

BLOCK_HEADER = (
    "## Your Memory\n"
    "\n"
    "The following is information you've learned about the user from previous conversations.\n"
    "Use this context naturally. To update a memory, use the update_memory tool with the memory ID."
)
EMPTY_NOTE = "You have not saved any memories about the user yet."


def block_order(item: MemoryItem) -> tuple:
    """Return the sort key of the block: category, then creation time, then id."""
    return (item.category.value, item.created_at, item.id)


def _one_line(text: str) -> str:
    """Fold newlines so one memory stays one line of the block."""
    return " ".join(text.split())


def memory_line(memory_id: str, subject: str | None, content: str) -> str:
    """Render one memory as a list line with its id and optional subject."""
    subject_part = f"[{_one_line(subject)}] " if subject else ""
    return f"- [id:{memory_id}] {subject_part}{_one_line(content)}"


def render_memory_line(item: MemoryItem) -> str:
    """Render a stored memory as its line of the block."""
    return memory_line(item.id, item.subject, item.content)


def render_memory_block(memories: Iterable[MemoryItem]) -> str:
    """Render the memory block for the system prompt in a byte-stable order."""
    ordered = sorted(memories, key=block_order)
    if not ordered:
        return f"{BLOCK_HEADER}\n\n{EMPTY_NOTE}"
    sections = [BLOCK_HEADER]
    for category, items in groupby(ordered, key=lambda item: item.category):
        lines = "\n".join(render_memory_line(item) for item in items)
        sections.append(f"### {category.heading}\n{lines}")
    return "\n\n".join(sections)
