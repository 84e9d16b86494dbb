"""Memory batches: a tidy pass or an import is one batch of changes, undone (and redone) whole.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26 15:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "agent_memory_batches",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("automatic", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=True),
        sa.Column("digest", sa.String(length=64), nullable=True),
        sa.Column("tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("reverts_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("undone_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_memory_batches")),
    )
    op.create_index(
        "ix_agent_memory_batches_owner_created",
        "agent_memory_batches",
        ["owner_id", "created_at"],
    )
    op.create_table(
        "agent_memory_batch_changes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("memory_id", sa.String(length=8), nullable=False),
        sa.Column("before_version", sa.Integer(), nullable=True),
        sa.Column("before_deleted", sa.Boolean(), nullable=False),
        sa.Column("after_version", sa.Integer(), nullable=False),
        sa.Column("after_deleted", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["batch_id"],
            ["agent_memory_batches.id"],
            name=op.f("fk_agent_memory_batch_changes_batch_id_agent_memory_batches"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["agent_memories.id"],
            name=op.f("fk_agent_memory_batch_changes_memory_id_agent_memories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_memory_batch_changes")),
    )
    op.create_index(
        "ix_agent_memory_batch_changes_batch",
        "agent_memory_batch_changes",
        ["batch_id", "memory_id"],
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index("ix_agent_memory_batch_changes_batch", "agent_memory_batch_changes")
    op.drop_table("agent_memory_batch_changes")
    op.drop_index("ix_agent_memory_batches_owner_created", "agent_memory_batches")
    op.drop_table("agent_memory_batches")
