"""Search by meaning: a vector per turn, beside its words.

conversation_turns.embedding: the turn's vector (float16 values, bytes), computed in the
background after the turn is stored (bot/conversations/vectors.py), b"" for a turn without
words; NULL until then, and for every turn stored before this revision until the
backfill reaches it. conversation_turns.embedding_model names the model that made it, so
vectors of another model are never compared and are made again. A plain column on both
engines: no vector extension is assumed, an owner's vectors are read by the owner index.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27 17:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    # A plain ALTER on both engines: SQLite's batch mode would rebuild the table and lose
    # the triggers that keep conversation_search in step.
    op.add_column("conversation_turns", sa.Column("embedding", sa.LargeBinary(), nullable=True))
    op.add_column(
        "conversation_turns", sa.Column("embedding_model", sa.String(length=64), nullable=True)
    )


def downgrade() -> None:
    """Revert this revision."""
    op.execute("ALTER TABLE conversation_turns DROP COLUMN embedding_model")
    op.execute("ALTER TABLE conversation_turns DROP COLUMN embedding")
