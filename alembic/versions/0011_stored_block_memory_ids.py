"""The stored memory block keeps the ids of the memories it holds, in the order it lists them.

Until now they were read back out of the rendered text; a column says it without parsing.
Blocks already stored get their ids from their lines here, once, as the bot read them before.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26 00:45:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# How a block's line named its memory until now: the 8-character id after this start.
LINE_START = "- [id:"


def _ids_in(block: str) -> list[str]:
    """Return the ids of the memories a rendered block lists, in its order."""
    start = len(LINE_START)
    return [line[start : start + 8] for line in block.splitlines() if line.startswith(LINE_START)]


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("agent_memory_blocks") as batch_op:
        batch_op.add_column(sa.Column("memory_ids", sa.JSON(), nullable=True))
    blocks = sa.table(
        "agent_memory_blocks",
        sa.column("owner_id", sa.BigInteger()),
        sa.column("block", sa.Text()),
        sa.column("memory_ids", sa.JSON()),
    )
    connection = op.get_bind()
    for row in connection.execute(sa.select(blocks.c.owner_id, blocks.c.block)):
        connection.execute(
            blocks.update()
            .where(blocks.c.owner_id == row.owner_id)
            .values(memory_ids=_ids_in(row.block))
        )
    with op.batch_alter_table("agent_memory_blocks") as batch_op:
        batch_op.alter_column("memory_ids", existing_type=sa.JSON(), nullable=False)


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("agent_memory_blocks") as batch_op:
        batch_op.drop_column("memory_ids")
