"""The memory budget: how many tokens the owner's memories take up in the memory block."""

from collections.abc import Iterable
from dataclasses import dataclass

from memory.block import memory_line, render_memory_line
from memory.items import MemoryItem
from memory.tokens import count_tokens

DEFAULT_TOKEN_BUDGET = 2000
# Stands in for the id a new memory will get; real ids tokenize to about as many tokens.
PLACEHOLDER_ID = "a1b2c3d4"


@dataclass(frozen=True)
class MemoryUsage:
    """How much of the budget the owner's active memories use."""

    count: int
    tokens: int
    budget: int

    def fits(self, more_tokens: int) -> bool:
        """Tell whether more_tokens can be added without going over the budget."""
        return self.tokens + more_tokens <= self.budget


def memory_tokens(item: MemoryItem) -> int:
    """Count the tokens of a memory's line in the memory block."""
    return count_tokens(render_memory_line(item))


def new_memory_tokens(content: str, subject: str | None) -> int:
    """Count the tokens a memory not yet saved would take in the block."""
    return count_tokens(memory_line(PLACEHOLDER_ID, subject, content))


@dataclass(frozen=True)
class MemoryFull:
    """An add the budget refused: the content not saved, and how full memory was."""

    content: str
    usage: MemoryUsage


def usage_of(items: Iterable[MemoryItem], budget: int) -> MemoryUsage:
    """Sum the tokens of the active memories against the budget."""
    items = list(items)
    return MemoryUsage(
        count=len(items), tokens=sum(memory_tokens(item) for item in items), budget=budget
    )
