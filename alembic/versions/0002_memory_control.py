"""Memory control: the undo log of the agent's writes, and per-owner memory settings.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "agent_memory_changes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("memory_id", sa.String(length=8), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("version_number", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("undone_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "kind IN ('added', 'updated', 'forgotten')",
            name=op.f("ck_agent_memory_changes_kind"),
        ),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["agent_memories.id"],
            name=op.f("fk_agent_memory_changes_memory_id_agent_memories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_memory_changes")),
    )
    op.create_table(
        "owner_settings",
        sa.Column("owner_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("memory_enabled", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("owner_id", name=op.f("pk_owner_settings")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("owner_settings")
    op.drop_table("agent_memory_changes")
