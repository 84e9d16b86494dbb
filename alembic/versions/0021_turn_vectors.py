"""Search by meaning: a vector per turn, beside its words.

conversation_turns.embedding: the turn's vector (float16 values, bytes), computed in the
background after the turn is stored (bot/conversations/vectors.py), b"" for a turn without
words; NULL until then, and for every turn stored before this revision until the
backfill reaches it. conversation_turns.embedding_model names the model that made it, so
vectors of another model are never compared and are made again. A plain column on both
engines: no vector extension is assumed, an owner's vectors are read by the owner index.

Every turn's search text is written again, a batch at a time, as a new turn's now is: with
its month and year ("May 2023": "what did we say in May?") and, for the bot's words,
"assistant".

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27 17:00:00.000000
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from bot.conversations.content import search_text
from bot.conversations.said_by import SaidBy
from memory.models import UTCDateTime

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 1000


def _json(value: object) -> object:
    """Return a JSON column's value as Python (SQLite hands it over as text)."""
    return json.loads(value) if isinstance(value, str) else value


def _index_turns(bind: sa.Connection) -> None:
    """Write every turn's search text again, as the store writes a new turn's."""
    after = 0
    while True:
        statement = sa.text(
            "SELECT id, role, content, owner_id, said_by, search_text, created_at "
            "FROM conversation_turns WHERE id > :after AND owner_id IS NOT NULL "
            "ORDER BY id LIMIT :batch"
        ).columns(created_at=UTCDateTime())
        rows = bind.execute(statement, {"after": after, "batch": BATCH}).all()
        if not rows:
            return
        changed = []
        for turn_id, role, content, owner_id, said_by, old, at in rows:
            stored = _json(said_by)
            who = SaidBy.of_stored(stored) if isinstance(stored, dict) else None
            new = search_text(role, _json(content), owner_id, who, at)  # type: ignore[arg-type]
            if new != old:
                changed.append({"id": turn_id, "text": new})
        if changed:
            bind.execute(
                sa.text("UPDATE conversation_turns SET search_text = :text WHERE id = :id"),
                changed,
            )
        after = rows[-1][0]


def upgrade() -> None:
    """Apply this revision."""
    # A plain ALTER on both engines: SQLite's batch mode would rebuild the table and lose
    # the triggers that keep conversation_search in step.
    op.add_column("conversation_turns", sa.Column("embedding", sa.LargeBinary(), nullable=True))
    op.add_column(
        "conversation_turns", sa.Column("embedding_model", sa.String(length=64), nullable=True)
    )
    _index_turns(op.get_bind())


def downgrade() -> None:
    """Revert this revision (the search texts keep their date words: they only add)."""
    op.execute("ALTER TABLE conversation_turns DROP COLUMN embedding_model")
    op.execute("ALTER TABLE conversation_turns DROP COLUMN embedding")
