"""Reminders, their fires (one per scheduled instant) and each owner's time zone.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 02:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STATES = "'active', 'paused', 'done', 'cancelled', 'missed'"
OUTCOMES = "'claimed', 'sent', 'blocked', 'failed', 'skipped', 'missed'"


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "reminders",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("thread_id", sa.BigInteger(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("check_in", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("zone", sa.String(length=64), nullable=False),
        sa.Column("start_local", sa.DateTime(timezone=False), nullable=False),
        sa.Column("start_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("rule", sa.String(length=500), nullable=True),
        sa.Column("until_local", sa.DateTime(timezone=False), nullable=True),
        sa.Column("count", sa.Integer(), nullable=True),
        sa.Column("next_fire_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(f"state IN ({STATES})", name=op.f("ck_reminders_state")),
        sa.CheckConstraint("length(text) BETWEEN 1 AND 500", name=op.f("ck_reminders_text_length")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reminders")),
    )
    op.create_index("ix_reminders_due", "reminders", ["state", "next_fire_at"])
    op.create_index("ix_reminders_owner", "reminders", ["owner_id", "state", "next_fire_at"])
    op.create_table(
        "reminder_fires",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("reminder_id", sa.Integer(), nullable=False),
        sa.Column("scheduled_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.CheckConstraint(f"outcome IN ({OUTCOMES})", name=op.f("ck_reminder_fires_outcome")),
        sa.ForeignKeyConstraint(
            ["reminder_id"],
            ["reminders.id"],
            name=op.f("fk_reminder_fires_reminder_id_reminders"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reminder_fires")),
        sa.UniqueConstraint("reminder_id", "scheduled_at", name="uq_reminder_fires_instant"),
    )
    op.create_table(
        "owner_zones",
        sa.Column("owner_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("zone", sa.String(length=64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("owner_id", name=op.f("pk_owner_zones")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("owner_zones")
    op.drop_table("reminder_fires")
    op.drop_index("ix_reminders_owner", table_name="reminders")
    op.drop_index("ix_reminders_due", table_name="reminders")
    op.drop_table("reminders")
