"""A memory question can carry several facts, an update, and whom it is about.

memory_proposals stays one row per fact; new columns:
- question_id: the question the fact belongs to (the id of its first fact). Existing rows
  are each their own question (set to their id here).
- target_id: the memory a fact would update (shown old -> new), NULL for a new memory.
- previous: that memory's content when the question was asked, as the question shows it.
- about: in a group, the member the question is about (only they may answer it); NULL in a
  private chat, and for a fact about the whole group.
- chosen: whether the fact's toggle is on; Remember saves the chosen facts (true by default).

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-27 20:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the question's columns, and make every existing row its own question."""
    with op.batch_alter_table("memory_proposals") as batch:
        batch.add_column(sa.Column("question_id", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("target_id", sa.String(8), nullable=True))
        batch.add_column(sa.Column("previous", sa.Text(), nullable=True))
        batch.add_column(sa.Column("about", sa.String(200), nullable=True))
        batch.add_column(
            sa.Column("chosen", sa.Boolean(), nullable=False, server_default=sa.true())
        )
    op.execute("UPDATE memory_proposals SET question_id = id WHERE question_id IS NULL")


def downgrade() -> None:
    """Drop the question's columns (a question of several facts becomes separate rows)."""
    with op.batch_alter_table("memory_proposals") as batch:
        for column in ("chosen", "about", "previous", "target_id", "question_id"):
            batch.drop_column(column)
