"""Rendered memory blocks: each owner's block kept until their memories change.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 19:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "agent_memory_blocks",
        sa.Column("owner_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("block", sa.Text(), nullable=False),
        sa.Column("rendered_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("owner_id", name=op.f("pk_agent_memory_blocks")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("agent_memory_blocks")
