"""A conversation as the agent answers it: its state, its stored turns, its memory switch."""

from dataclasses import dataclass
from typing import Any


class DuplicateUpdate(Exception):
    """This Telegram update was stored before: it is being or has been answered."""


@dataclass(frozen=True)
class ConversationState:
    """What the agent needs of a conversation to build the next request."""

    id: int
    chat_id: int
    owner_id: int
    memory_block: str
    summary: str | None


@dataclass(frozen=True)
class StoredTurn:
    """One stored message of a conversation."""

    id: int
    role: str
    content: list[dict[str, Any]]
    tokens: int = 0


@dataclass(frozen=True)
class Snapshot:
    """A conversation as the agent answers it: its state, unsummarised turns and memory switch."""

    conversation: ConversationState
    turns: list[StoredTurn]
    memory_on: bool

    @property
    def unanswered(self) -> bool:
        """Tell whether the newest turn is the user's, still waiting for the model."""
        return bool(self.turns) and self.turns[-1].role == "user"
