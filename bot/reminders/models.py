"""ORM models of reminders and their fires: the database is the source of truth."""

import enum
from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from memory.models import Base, UTCDateTime, utcnow

MAX_TEXT = 500


class ReminderState(enum.StrEnum):
    """Where a reminder is in its life."""

    ACTIVE = "active"
    # The chat blocked the bot: it stops firing until the owner sets a reminder again.
    PAUSED = "paused"
    DONE = "done"
    CANCELLED = "cancelled"
    # A one-off that came due while the bot was down for more than a day.
    MISSED = "missed"


class FireOutcome(enum.StrEnum):
    """What became of one scheduled instant of a reminder."""

    CLAIMED = "claimed"
    SENT = "sent"
    BLOCKED = "blocked"
    FAILED = "failed"
    # Came due during downtime, too late to be worth sending.
    SKIPPED = "skipped"
    MISSED = "missed"


def _values(kind: type[enum.StrEnum]) -> str:
    """Return an enum's values as an SQL list."""
    return ", ".join(f"'{member.value}'" for member in kind)


class Reminder(Base):
    """A reminder: where it fires, what it says, and when, as wall times in its zone."""

    __tablename__ = "reminders"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    owner_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    chat_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    thread_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    # A check-in: the text is a prompt the agent answers at fire time, with memory.
    check_in: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False, server_default=false()
    )
    # The owner's IANA zone when the reminder was set: it keeps its wall time in that zone.
    zone: Mapped[str] = mapped_column(String(64), nullable=False)
    # The first wall time (naive, in zone); a duration also gives its exact instant.
    start_local: Mapped[datetime] = mapped_column(DateTime(timezone=False), nullable=False)
    start_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    rule: Mapped[str | None] = mapped_column(String(500), nullable=True)
    until_local: Mapped[datetime | None] = mapped_column(DateTime(timezone=False), nullable=True)
    count: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # The next instant it fires, in UTC; NULL once it will never fire again.
    next_fire_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    state: Mapped[str] = mapped_column(String(16), nullable=False, default=ReminderState.ACTIVE)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)

    __table_args__ = (
        CheckConstraint(f"state IN ({_values(ReminderState)})", name="state"),
        CheckConstraint(f"length(text) BETWEEN 1 AND {MAX_TEXT}", name="text_length"),
        # Serves the due query: the earliest active reminders first.
        Index("ix_reminders_due", "state", "next_fire_at"),
        Index("ix_reminders_owner", "owner_id", "state", "next_fire_at"),
    )


class ReminderFire(Base):
    """One scheduled instant of a reminder, claimed once: a second claim cannot be written."""

    __tablename__ = "reminder_fires"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    reminder_id: Mapped[int] = mapped_column(
        ForeignKey("reminders.id", ondelete="CASCADE"), nullable=False
    )
    scheduled_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    outcome: Mapped[str] = mapped_column(String(16), nullable=False)
    claimed_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    message_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # While claimed and not sent: after this instant any process may claim it again and send
    # it (the sender died, or a passing failure's backoff is over).
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    # The first passing failure of its send: retries stop a bounded time after it.
    failed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (
        UniqueConstraint("reminder_id", "scheduled_at", name="uq_reminder_fires_instant"),
        CheckConstraint(f"outcome IN ({_values(FireOutcome)})", name="outcome"),
        Index("ix_reminder_fires_lease", "outcome", "lease_until"),
    )


class OwnerZone(Base):
    """An owner's IANA time zone, asked for once; no row means it is not known yet."""

    __tablename__ = "owner_zones"

    owner_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    zone: Mapped[str] = mapped_column(String(64), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
