"""Reminder fires are delivered at least once: a claim has a lease, a failed send a retry.

reminder_fires.lease_until: while a fire is claimed and not yet sent, the instant after which
another pass (of any process) may claim it again and send it; NULL for fires claimed before
this revision (they were delivered at most once and are left as they were).
reminder_fires.attempts: how many sends of the fire were started.
reminder_fires.failed_at: when its first send failed for a passing reason (a timeout, a 5xx,
a reset connection); retries stop a bounded time after it.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27 14:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    # Plain ALTERs on both engines: nullable columns (and one with a default) need no rebuild.
    op.add_column(
        "reminder_fires", sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column(
        "reminder_fires",
        sa.Column("attempts", sa.Integer(), nullable=False, server_default=sa.text("0")),
    )
    op.add_column(
        "reminder_fires", sa.Column("failed_at", sa.DateTime(timezone=True), nullable=True)
    )
    # Serves the pass that looks for claims whose lease ran out.
    op.create_index("ix_reminder_fires_lease", "reminder_fires", ["outcome", "lease_until"])


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index("ix_reminder_fires_lease", table_name="reminder_fires")
    for column in ("failed_at", "attempts", "lease_until"):
        op.execute(f"ALTER TABLE reminder_fires DROP COLUMN {column}")
