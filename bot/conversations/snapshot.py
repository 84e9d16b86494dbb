"""A conversation as the agent answers it: its state, its stored turns, its memory switch."""

from dataclasses import dataclass
from datetime import date
from typing import TypedDict

from bot.conversations.blocks import Content, Role
from bot.conversations.said_by import SaidBy


class DuplicateUpdate(Exception):
    """This Telegram message was stored before: it is being or has been answered."""


@dataclass(frozen=True)
class ChatThread:
    """Where a conversation happens: a chat, and its forum topic if it has topics."""

    chat_id: int
    thread_id: int | None = None


@dataclass(frozen=True)
class MessageRef:
    """Where a user's message came from, stored with it."""

    # "chat:message id:date", which never repeats, so a redelivery is recognised.
    message_key: str | None = None
    update_id: int | None = None
    sender_id: int | None = None
    # Whose words it holds (a group member's, a forward's author's), for search results.
    said_by: SaidBy | None = None


@dataclass(frozen=True)
class ConversationState:
    """What the agent needs of a conversation to build the next request."""

    id: int
    chat_id: int
    thread_id: int | None
    owner_id: int
    memory_block: str
    summary: str | None  # the summariser's prose
    # The memory changes of the turns folded into the summary, a line each
    # (bot.agent.history.ledger).
    summary_changes: tuple[str, ...] = ()

    @property
    def place(self) -> ChatThread:
        """Return the chat and topic the conversation happens in."""
        return ChatThread(self.chat_id, self.thread_id)


@dataclass(frozen=True)
class Unanswered:
    """A conversation whose newest turn is a user's message, and who sent it."""

    conversation: ConversationState
    sender_id: int | None


class MemoryWrite(TypedDict):
    """A memory one of the turn's tool calls saved, updated or forgot, stored with the turn."""

    tool_use_id: str
    kind: str  # a memory.items.ChangeKind's value
    memory_id: str
    subject: str | None
    content: str  # the memory's content after the change (a forgotten one's last)


@dataclass(frozen=True)
class StoredTurn:
    """One stored message of a conversation, and the memory writes its tool results made."""

    id: int
    role: Role
    content: Content
    tokens: int = 0
    memory_writes: tuple[MemoryWrite, ...] = ()
    # Whose words a user's message holds (its group member), as stored with it.
    said_by: SaidBy | None = None


@dataclass(frozen=True)
class Waiting:
    """What may wait for a conversation's next reply: notes for the model, memory questions.

    True means "look": the reply reads the table; False, read with the message, spares that.
    """

    notes: bool = True
    questions: bool = True


NOTHING_WAITING = Waiting(notes=False, questions=False)


@dataclass(frozen=True)
class WebDay:
    """An owner's web uses on one day, and their IANA zone (None: unknown)."""

    day: date
    used: int
    zone: str | None


@dataclass(frozen=True)
class Snapshot:
    """A conversation as the agent answers it: its state, unsummarised turns and memory switch."""

    conversation: ConversationState
    turns: list[StoredTurn]
    memory_on: bool
    # Read in the message's own transaction, so the reply skips a session for each "no".
    waiting: Waiting = Waiting()
    # The owner's web uses of the message's day, read with its turns; None: not read.
    web: WebDay | None = None

    @property
    def unanswered(self) -> bool:
        """Tell whether the newest turn is the user's, still waiting for the model."""
        return bool(self.turns) and self.turns[-1].role == "user"
