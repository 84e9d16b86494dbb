"""Messages are known by a key that cannot repeat; turns know their sender; topics have threads.

Telegram restarts update ids after a week of silence and with a new token, so a unique
update_id could drop a real message as a "redelivery". A redelivered message is now recognised
by message_key ("chat:message id:date", which never repeats); update_id stays as a record and
loses its unique constraint. sender_id lets a restart re-check the allowlist; thread_id gives
each forum topic its own conversation.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 18:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("conversation_turns", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_conversation_turns_update_id"), type_="unique")
        batch_op.add_column(sa.Column("message_key", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("sender_id", sa.BigInteger(), nullable=True))
        batch_op.create_unique_constraint(
            batch_op.f("uq_conversation_turns_message_key"), ["message_key"]
        )
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("thread_id", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.drop_column("thread_id")
    # Ids Telegram restarted may repeat now; the older of two turns keeps its update id.
    op.execute(
        "UPDATE conversation_turns SET update_id = NULL WHERE id IN ("
        " SELECT later.id FROM conversation_turns later JOIN conversation_turns earlier"
        " ON earlier.update_id = later.update_id AND earlier.id < later.id)"
    )
    with op.batch_alter_table("conversation_turns", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_conversation_turns_message_key"), type_="unique")
        batch_op.drop_column("sender_id")
        batch_op.drop_column("message_key")
        batch_op.create_unique_constraint(
            batch_op.f("uq_conversation_turns_update_id"), ["update_id"]
        )
