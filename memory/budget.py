"""How much memory an owner keeps: the block's token budget, and the cap on memories."""

from dataclasses import dataclass

# Tokens the memory block may take in the system prompt (MEMORY_TOKEN_BUDGET).
DEFAULT_TOKEN_BUDGET = 2000
# Memories an owner may keep at most (MEMORY_MAX_ITEMS): generous, but a bound on abuse.
DEFAULT_MEMORY_LIMIT = 10_000


@dataclass(frozen=True)
class BlockUsage:
    """How the owner's active memories sit: all of them, those in the block, its tokens."""

    count: int
    in_block: int
    tokens: int
    budget: int

    @property
    def archived(self) -> int:
        """Return how many active memories are not in the block."""
        return self.count - self.in_block


@dataclass(frozen=True)
class MemoryFull:
    """An add the cap refused: the content not saved, and how many memories there are."""

    content: str
    count: int
    limit: int
