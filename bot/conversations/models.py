"""ORM models of conversations and their turns."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from bot.conversations.blocks import Content
from bot.conversations.snapshot import MemoryWrite
from memory.models import Base, UTCDateTime, utcnow


class Conversation(Base):
    """A run of turns in one chat, with the memory block it started with."""

    __tablename__ = "conversations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    chat_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    owner_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    # The forum topic of a supergroup with topics: each topic has its own conversations.
    thread_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    memory_block: Mapped[str] = mapped_column(Text, nullable=False)
    summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The memory changes of the folded turns, a line each, kept apart from the summary's prose.
    summary_changes: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    # Turns up to this id are folded into the summary and no longer sent.
    summary_through_turn_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    last_activity_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (
        Index("ix_conversations_chat_open", "chat_id", "ended_at"),
        Index("ix_conversations_owner_open", "owner_id", "ended_at"),
    )


class Turn(Base):
    """One message of a conversation as sent to the model: a role and content blocks."""

    __tablename__ = "conversation_turns"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    conversation_id: Mapped[int] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False
    )
    role: Mapped[str] = mapped_column(String(16), nullable=False)  # a Role
    content: Mapped[Content] = mapped_column(JSON, nullable=False)
    # Counted once when stored, so budget checks never re-tokenize the history.
    tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    # The Telegram update a user's message came in, for the record: update ids can repeat.
    update_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # "chat:message id:date" of a user's message, which never repeats, so a redelivered
    # update is recognised and not answered twice.
    message_key: Mapped[str | None] = mapped_column(String(64), nullable=True, unique=True)
    # Who sent a user's message, so answering it after a restart re-checks the allowlist.
    sender_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # What search_conversations finds the turn by: its folded words, each marked with its
    # owner (memory.search_terms); NULL for turns without words (tool calls and results).
    search_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Whose words a user's turn holds beyond the user's (bot.conversations.said_by), so a
    # search result names them; NULL for the user's own words and the bot's.
    said_by: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # What the turn's tool results saved, updated or forgot (NULL: nothing), so compaction's
    # list of memory changes reads it here, not from the results' wording.
    memory_writes: Mapped[list[MemoryWrite] | None] = mapped_column(JSON, nullable=True)
    # The ids of the owner's memories the reply cited up to this turn of the model's, first
    # cited first (NULL: none), for the reply's "Based on" button (bot/conversations/sources).
    cited_memory_ids: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    # The conversation's owner, again: lets Postgres read one owner's turns newest first.
    owner_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # Where the turn's exchange sits in the order the user sent (bot.conversations.order),
    # whichever process stored it first; NULL for turns from before it was kept.
    user_order: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # The turn's vector for search by meaning (bot.conversations.vectors): float16 bytes, b""
    # for a turn without words, NULL until computed; and the model that made it.
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    embedding_model: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)

    __table_args__ = (
        Index("ix_conversation_turns_conversation", "conversation_id", "id"),
        Index("ix_conversation_turns_owner", "owner_id", "id"),
        Index("ix_conversation_turns_user_order", "conversation_id", "user_order"),
    )


class TurnLease(Base):
    """A chat whose turn a process is answering (holder), or left unfinished (holder NULL)."""

    __tablename__ = "turn_leases"

    chat_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    # The process answering, until expires_at unless it renews; NULL: it let go at shutdown.
    holder: Mapped[str | None] = mapped_column(String(64), nullable=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    # Which copy of the database the row was written in: a restore from a backup changes it,
    # and a turn from before a restore may have been answered after the backup was taken.
    incarnation: Mapped[int] = mapped_column(BigInteger, nullable=False)


class BotProcess(Base):
    """A running bot process, as long as it renews expires_at: its leases are its while so."""

    __tablename__ = "bot_processes"

    holder: Mapped[str] = mapped_column(String(64), primary_key=True)  # its turn leases' holder
    host: Mapped[str] = mapped_column(String(64), nullable=False)
    pid: Mapped[int] = mapped_column(BigInteger, nullable=False)
    # When the process started, by its host's clock ticks since boot (NULL: unknown), so a
    # reused pid is not taken for the process.
    started: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)


class JobClaim(Base):
    """A background job's run for one period, claimed by one process (see job_claims.py)."""

    __tablename__ = "job_claims"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)  # a JobName
    period: Mapped[str] = mapped_column(String(64), primary_key=True)  # "2026-11-27", ...
    # The process running it, until lease_until unless it renews; taken over after that.
    claimed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    done_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class PendingNote(Base):
    """A line for the model that waits for the user's next message in its conversation.

    It travels once, in that message's turn (never in the cached system prompt): what the
    user answered to a memory question by button, or an Undo of one of the model's changes.
    """

    __tablename__ = "pending_notes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    conversation_id: Mapped[int] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False
    )
    owner_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    # The user's turn it went into; NULL while it waits.
    turn_id: Mapped[int | None] = mapped_column(Integer, nullable=True)

    __table_args__ = (Index("ix_pending_notes_conversation", "conversation_id", "turn_id"),)
