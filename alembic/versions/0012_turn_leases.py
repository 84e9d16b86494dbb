"""Turn leases: which process is answering a chat right now, until when.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26 00:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "turn_leases",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("incarnation", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("chat_id", name=op.f("pk_turn_leases")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("turn_leases")
