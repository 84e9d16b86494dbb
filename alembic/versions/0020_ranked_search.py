"""Search by relevance: stemmed words, speakers' names and file names in the index.

Every indexed word is now stemmed (memory/search_terms.py: "camped" is found by
"camping"), and a turn's search text also holds who said it (a group member, a forward's
author) and the names of its files. Every turn's search text and every active memory's
index row are written again here, a batch at a time; the engines' indexes follow (SQLite's
triggers, Postgres's generated column), so both hold exactly what a new turn would.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27 14:00:00.000000
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from bot.conversations.content import search_text
from bot.conversations.said_by import SaidBy
from memory.search_terms import index_text

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 1000
_ALPHABET62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _id_number(memory_id: str) -> int:
    """Return a memory id as the integer SQLite's index keys its row by (base 62)."""
    number = 0
    for char in memory_id:
        number = number * 62 + _ALPHABET62.index(char)
    return number


def _json(value: object) -> object:
    """Return a JSON column's value as Python (SQLite hands it over as text)."""
    return json.loads(value) if isinstance(value, str) else value


def _index_turns(bind: sa.Connection) -> None:
    """Write every turn's search text again, as the store writes a new turn's."""
    after = 0
    while True:
        rows = bind.execute(
            sa.text(
                "SELECT id, role, content, owner_id, said_by, search_text FROM conversation_turns "
                "WHERE id > :after AND owner_id IS NOT NULL ORDER BY id LIMIT :batch"
            ),
            {"after": after, "batch": BATCH},
        ).all()
        if not rows:
            return
        changed = []
        for turn_id, role, content, owner_id, said_by, old in rows:
            stored = _json(said_by)
            who = SaidBy.of_stored(stored) if isinstance(stored, dict) else None
            new = search_text(role, _json(content), owner_id, who)  # type: ignore[arg-type]
            if new != old:
                changed.append({"id": turn_id, "text": new})
        if changed:
            bind.execute(
                sa.text("UPDATE conversation_turns SET search_text = :text WHERE id = :id"),
                changed,
            )
        after = rows[-1][0]


def _index_memories(bind: sa.Connection) -> None:
    """Write every active memory's index row again."""
    sqlite = bind.dialect.name == "sqlite"
    op.execute("DELETE FROM agent_memory_search")
    rows = bind.execute(
        sa.text(
            "SELECT m.id, m.owner_id, m.subject, v.content "
            "FROM agent_memories m JOIN agent_memory_versions v ON v.memory_id = m.id "
            "AND v.version_number = (SELECT max(version_number) FROM agent_memory_versions "
            "WHERE memory_id = m.id) WHERE m.deleted_at IS NULL"
        )
    ).all()
    values = [
        {
            "key": _id_number(memory_id) if sqlite else memory_id,
            "owner": owner_id,
            "subject": index_text(subject or "", owner_id),
            "content": index_text(content, owner_id),
        }
        for memory_id, owner_id, subject, content in rows
    ]
    statement = (
        "INSERT INTO agent_memory_search(rowid, owner_id, subject, content) "
        "VALUES (:key, :owner, :subject, :content)"
        if sqlite
        else "INSERT INTO agent_memory_search(memory_id, subject, content) "
        "VALUES (:key, :subject, :content)"
    )
    for start in range(0, len(values), BATCH):
        bind.execute(sa.text(statement), values[start : start + BATCH])


def upgrade() -> None:
    """Apply this revision."""
    bind = op.get_bind()
    _index_turns(bind)
    _index_memories(bind)


def downgrade() -> None:
    """Revert this revision: the index keeps the new words, which the old code still reads.

    An older version searches them unstemmed, so a few words it looks for (an inflected
    one) are no longer found until the turn is written again; nothing is lost.
    """
