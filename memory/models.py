"""ORM models of the memory domain, on the metadata every table shares."""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from memory.categories import Category
from memory.items import ChangeKind, ProposalStatus

# The full-text indexes live outside this metadata (FTS5 tables on SQLite, a generated
# tsvector on Postgres): migration 0006 creates them, memory/search_index.py uses them.
SEARCH_OBJECTS = ("agent_memory_search", "conversation_search", "search_document")


def is_search_object(name: str | None) -> bool:
    """Tell whether a table or column belongs to a full-text index, not to the models."""
    return name is not None and name.startswith(SEARCH_OBJECTS)


# Named constraints keep migrations identical on SQLite and Postgres.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

CATEGORY_VALUES = ", ".join(f"'{c.value}'" for c in Category)


class Base(DeclarativeBase):
    """Declarative base whose metadata holds the tables of bot/ and memory/."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every engine (SQLite drops the offset)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Store UTC."""
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTCDateTime column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Read back as aware UTC."""
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    """Return the current time, aware, in UTC."""
    return datetime.now(UTC)


class Memory(Base):
    """One thing the bot remembers about an owner; its text lives in versions."""

    __tablename__ = "agent_memories"

    id: Mapped[str] = mapped_column(String(8), primary_key=True)
    owner_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    category: Mapped[str] = mapped_column(String(16), nullable=False)
    subject: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # Kept in the prompt's block before any unpinned memory.
    pinned: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False, server_default=false()
    )
    # The tokens of the memory's block line, counted when its content changes.
    tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    # When its content last changed (its newest version): the block prefers the newest.
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    # The subject folded for comparison, so the same-subject check is one indexed lookup.
    subject_key: Mapped[str | None] = mapped_column(String(200), nullable=True)

    __table_args__ = (
        CheckConstraint(f"category IN ({CATEGORY_VALUES})", name="category"),
        # Serves "active memories of one owner in block order".
        Index(
            "ix_agent_memories_owner_block_order",
            "owner_id",
            "deleted_at",
            "category",
            "created_at",
            "id",
        ),
        # Serves choosing the block: pinned first, then the most recently changed.
        Index(
            "ix_agent_memories_owner_block_choice",
            "owner_id",
            "deleted_at",
            "pinned",
            "changed_at",
            "id",
        ),
        Index("ix_agent_memories_owner_subject", "owner_id", "subject_key"),
    )


class MemoryVersion(Base):
    """An append-only version of a memory's content."""

    __tablename__ = "agent_memory_versions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    memory_id: Mapped[str] = mapped_column(
        String(8), ForeignKey("agent_memories.id", ondelete="CASCADE"), nullable=False
    )
    version_number: Mapped[int] = mapped_column(Integer, nullable=False)
    content: Mapped[str] = mapped_column(Text, nullable=False)
    source_conversation_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)

    __table_args__ = (
        UniqueConstraint("memory_id", "version_number"),
        CheckConstraint("version_number >= 1", name="version_number_positive"),
        CheckConstraint("length(content) BETWEEN 5 AND 500", name="content_length"),
    )


CHANGE_KIND_VALUES = ", ".join(f"'{kind.value}'" for kind in ChangeKind)


class MemoryChangeRecord(Base):
    """A write the agent made, kept so the user can undo it once, even after a restart."""

    __tablename__ = "agent_memory_changes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    owner_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    memory_id: Mapped[str] = mapped_column(
        String(8), ForeignKey("agent_memories.id", ondelete="CASCADE"), nullable=False
    )
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    # The version the change left current; undo only applies while it still is.
    version_number: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    undone_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (CheckConstraint(f"kind IN ({CHANGE_KIND_VALUES})", name="kind"),)


class OwnerSettings(Base):
    """An owner's memory preferences; no row means the defaults."""

    __tablename__ = "owner_settings"

    owner_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    memory_enabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)


class StoredMemoryBlock(Base):
    """An owner's memory block as last rendered; any change to their memories deletes it."""

    __tablename__ = "agent_memory_blocks"

    owner_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    block: Mapped[str] = mapped_column(Text, nullable=False)
    # The ids of the memories the block holds, in the order it lists them.
    memory_ids: Mapped[list[str]] = mapped_column(JSON, nullable=False)
    rendered_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)


class MemoryBatch(Base):
    """A tidy pass or an import: a plan of changes, applied (and undone) as one batch."""

    __tablename__ = "agent_memory_batches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    owner_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    automatic: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False, server_default=false()
    )
    # The proposed lines, each with its skip flag; None once there is nothing left to decide.
    plan: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    # A fingerprint of the active memories the pass saw (after applying: the ones it left).
    digest: Mapped[str | None] = mapped_column(String(64), nullable=True)
    tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    # The batch an Undo all (or a Redo all) reverted.
    reverts_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    undone_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (Index("ix_agent_memory_batches_owner_created", "owner_id", "created_at"),)


class MemoryBatchChange(Base):
    """One memory a batch changed: where it stood before and after, and why."""

    __tablename__ = "agent_memory_batch_changes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    batch_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("agent_memory_batches.id", ondelete="CASCADE"), nullable=False
    )
    memory_id: Mapped[str] = mapped_column(
        String(8), ForeignKey("agent_memories.id", ondelete="CASCADE"), nullable=False
    )
    # None: the batch created the memory.
    before_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    before_deleted: Mapped[bool] = mapped_column(Boolean, nullable=False)
    after_version: Mapped[int] = mapped_column(Integer, nullable=False)
    after_deleted: Mapped[bool] = mapped_column(Boolean, nullable=False)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (Index("ix_agent_memory_batch_changes_batch", "batch_id", "memory_id"),)


PROPOSAL_STATUS_VALUES = ", ".join(f"'{status.value}'" for status in ProposalStatus)


class MemoryProposalRecord(Base):
    """A memory the model proposed (propose_memory) and the user's answer to it, if any."""

    __tablename__ = "memory_proposals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    owner_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    # The conversation it was proposed in (no foreign key: memory/ knows no conversations).
    conversation_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    # The user's message whose reply proposed it: one proposal per reply.
    turn_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # The proposed input, as add_to_memory takes it.
    content: Mapped[str] = mapped_column(Text, nullable=False)
    category: Mapped[str] = mapped_column(String(16), nullable=False)
    subject: Mapped[str] = mapped_column(String(200), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    answered_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # The memory a Remember saved (or a save in words settled it with).
    memory_id: Mapped[str | None] = mapped_column(String(8), nullable=True)
    # The question the fact belongs to (the id of its first fact): one message, one answer.
    question_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # The memory the fact would update, and its content when asked (shown old -> new).
    target_id: Mapped[str | None] = mapped_column(String(8), nullable=True)
    previous: Mapped[str | None] = mapped_column(Text, nullable=True)
    # In a group, the member the question is about (only they may answer); None: the group's.
    about: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # The fact's toggle: Remember saves the chosen facts.
    chosen: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=True, server_default=true()
    )

    __table_args__ = (
        CheckConstraint(f"status IN ({PROPOSAL_STATUS_VALUES})", name="status"),
        CheckConstraint(f"category IN ({CATEGORY_VALUES})", name="category"),
        Index("ix_memory_proposals_owner_conversation", "owner_id", "conversation_id"),
    )
