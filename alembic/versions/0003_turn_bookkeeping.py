"""Turn bookkeeping: token counts, Telegram update ids, and the summary's reach.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 16:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("conversation_turns", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tokens", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("update_id", sa.BigInteger(), nullable=True))
        batch_op.create_unique_constraint(
            batch_op.f("uq_conversation_turns_update_id"), ["update_id"]
        )
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("summary_through_turn_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.drop_column("summary_through_turn_id")
    with op.batch_alter_table("conversation_turns", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_conversation_turns_update_id"), type_="unique")
        batch_op.drop_column("update_id")
        batch_op.drop_column("tokens")
