"""Background work claimed once across processes: a row per job and period.

job_claims: a job's run for one period (retention for a day, an owner's nightly tidy pass for
their local date), claimed by one process until lease_until unless it renews, and done_at
once it finished. A claim whose lease ran out with done_at still NULL was left by a process
that died: the next process to ask takes it over, so the work is done once and never skipped.

Revision ID: 0024
Revises: 0022
Create Date: 2026-11-27 20:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0024"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "job_claims",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("period", sa.String(length=64), nullable=False),
        sa.Column("claimed_by", sa.String(length=64), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("name", "period", name=op.f("pk_job_claims")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("job_claims")
