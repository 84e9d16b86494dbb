"""A turn of the model's keeps the memories its reply drew on, for its "Based on" button.

conversation_turns.cited_memory_ids: the ids of the owner's memories the reply cited up to
this turn (by search result citation or by marker), first cited first; NULL when none.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 14:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    # A plain ALTER on both engines: SQLite's batch mode would rebuild the table and lose
    # the triggers that keep conversation_search in step.
    op.add_column("conversation_turns", sa.Column("cited_memory_ids", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    op.execute("ALTER TABLE conversation_turns DROP COLUMN cited_memory_ids")
