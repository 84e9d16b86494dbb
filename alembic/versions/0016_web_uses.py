"""Web uses: how many web searches and page reads each owner's turns made, a day.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26 14:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "web_uses",
        sa.Column("owner_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("searches", sa.Integer(), nullable=False),
        sa.Column("fetches", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("owner_id", "day", name=op.f("pk_web_uses")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("web_uses")
