"""A chat's turns read in the user's order; a heartbeat per bot process.

conversation_turns.user_order: where the turn's exchange sits in the order the user sent
(the Telegram message's date and id), so a history reads in that order whichever process
stored what first; NULL for turns stored before this revision, which read first, by id.

bot_processes: a row per running bot process (its lease holder name, host, pid and start
time), renewed every lease tick, so the leases of a process known dead are freed at once.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27 14:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    # A plain ALTER on both engines: SQLite's batch mode would rebuild the table and lose
    # the triggers that keep conversation_search in step.
    op.add_column("conversation_turns", sa.Column("user_order", sa.BigInteger(), nullable=True))
    op.create_index(
        "ix_conversation_turns_user_order", "conversation_turns", ["conversation_id", "user_order"]
    )
    op.create_table(
        "bot_processes",
        sa.Column("holder", sa.String(length=64), nullable=False),
        sa.Column("host", sa.String(length=64), nullable=False),
        sa.Column("pid", sa.BigInteger(), nullable=False),
        sa.Column("started", sa.BigInteger(), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("holder", name=op.f("pk_bot_processes")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("bot_processes")
    op.drop_index("ix_conversation_turns_user_order", table_name="conversation_turns")
    op.execute("ALTER TABLE conversation_turns DROP COLUMN user_order")
