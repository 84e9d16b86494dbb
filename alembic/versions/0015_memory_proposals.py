"""Memory proposals and pending notes: consent in one tap, and asking that does not nag.

memory_proposals keeps each memory the model proposed (propose_memory) with the user's answer
by button or in words, so the bounds on asking are kept in code. pending_notes keeps what the
model should read in the user's next message of a conversation (a tap's outcome, an Undo).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26 14:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "memory_proposals",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("conversation_id", sa.BigInteger(), nullable=False),
        sa.Column("turn_id", sa.BigInteger(), nullable=True),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("category", sa.String(length=16), nullable=False),
        sa.Column("subject", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("memory_id", sa.String(length=8), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'accepted', 'declined', 'expired')",
            name=op.f("ck_memory_proposals_status"),
        ),
        sa.CheckConstraint(
            "category IN ('person', 'preference', 'context', 'project')",
            name=op.f("ck_memory_proposals_category"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_proposals")),
    )
    op.create_index(
        "ix_memory_proposals_owner_conversation",
        "memory_proposals",
        ["owner_id", "conversation_id"],
    )
    op.create_table(
        "pending_notes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("conversation_id", sa.Integer(), nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("turn_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_pending_notes_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pending_notes")),
    )
    op.create_index(
        "ix_pending_notes_conversation", "pending_notes", ["conversation_id", "turn_id"]
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index("ix_pending_notes_conversation", table_name="pending_notes")
    op.drop_table("pending_notes")
    op.drop_index("ix_memory_proposals_owner_conversation", table_name="memory_proposals")
    op.drop_table("memory_proposals")
