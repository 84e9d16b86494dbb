"""Turns keep whose words they hold: a group member's, a forwarded message's author's, a quote's.

conversation_turns.said_by (JSON, NULL for the user's own words and the bot's) lets a search
result say "Bob" said or "Mallory"'s words, forwarded by the user, however little of the text
it shows. Turns stored before it stay NULL.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 00:50:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    # A plain ALTER on both engines: SQLite's batch mode would rebuild the table and lose
    # the triggers that keep conversation_search in step.
    op.add_column("conversation_turns", sa.Column("said_by", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    op.execute("ALTER TABLE conversation_turns DROP COLUMN said_by")
