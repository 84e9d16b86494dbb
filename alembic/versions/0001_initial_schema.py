"""Initial schema: memories with versions, conversations with turns.

Revision ID: 0001
Revises:
Create Date: 2026-11-22 15:28:48.664497
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "agent_memories",
        sa.Column("id", sa.String(length=8), nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("category", sa.String(length=16), nullable=False),
        sa.Column("subject", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "category IN ('context', 'person', 'preference', 'project')",
            name=op.f("ck_agent_memories_category"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_memories")),
    )
    with op.batch_alter_table("agent_memories", schema=None) as batch_op:
        batch_op.create_index(
            "ix_agent_memories_owner_block_order",
            ["owner_id", "deleted_at", "category", "created_at", "id"],
            unique=False,
        )

    op.create_table(
        "conversations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("memory_block", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_activity_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversations")),
    )
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.create_index("ix_conversations_chat_open", ["chat_id", "ended_at"], unique=False)
        batch_op.create_index("ix_conversations_owner_open", ["owner_id", "ended_at"], unique=False)

    op.create_table(
        "agent_memory_versions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("memory_id", sa.String(length=8), nullable=False),
        sa.Column("version_number", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("source_conversation_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "length(content) BETWEEN 5 AND 500",
            name=op.f("ck_agent_memory_versions_content_length"),
        ),
        sa.CheckConstraint(
            "version_number >= 1", name=op.f("ck_agent_memory_versions_version_number_positive")
        ),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["agent_memories.id"],
            name=op.f("fk_agent_memory_versions_memory_id_agent_memories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_memory_versions")),
        sa.UniqueConstraint(
            "memory_id", "version_number", name=op.f("uq_agent_memory_versions_memory_id")
        ),
    )
    op.create_table(
        "conversation_turns",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("conversation_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("content", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_conversation_turns_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversation_turns")),
    )
    with op.batch_alter_table("conversation_turns", schema=None) as batch_op:
        batch_op.create_index(
            "ix_conversation_turns_conversation", ["conversation_id", "id"], unique=False
        )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("conversation_turns", schema=None) as batch_op:
        batch_op.drop_index("ix_conversation_turns_conversation")

    op.drop_table("conversation_turns")
    op.drop_table("agent_memory_versions")
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.drop_index("ix_conversations_owner_open")
        batch_op.drop_index("ix_conversations_chat_open")

    op.drop_table("conversations")
    with op.batch_alter_table("agent_memories", schema=None) as batch_op:
        batch_op.drop_index("ix_agent_memories_owner_block_order")

    op.drop_table("agent_memories")
