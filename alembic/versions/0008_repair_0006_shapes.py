"""Repair databases migrated by an earlier edit of 0006: bring every 0006 shape to the current.

Migration 0006 was changed twice after it first landed. A database migrated by its first
version has search indexes with an owner column (and conversation_turns.search_owner) and
index words without their owner's mark; one migrated by its second lacks
conversation_turns.owner_id and its index. Both say they are at 0006, so nothing upgraded them
and every message failed. This revision looks at what is there and builds what is missing,
re-indexing with the current rules; on a database of the current shape it does nothing.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 03:40:00.000000
"""

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import sqlalchemy as sa

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE_TRIGGERS = ("insert", "delete", "update")


def _revision_0006() -> ModuleType:
    """Load 0006 for its index statements and fills: a landed migration never changes."""
    path = Path(__file__).with_name("0006_memory_archive_and_search.py")
    spec = importlib.util.spec_from_file_location("_membot_revision_0006", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def upgrade() -> None:
    """Apply this revision."""
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    columns = {column["name"] for column in sa.inspect(bind).get_columns("conversation_turns")}
    first_shape, owner_missing = "search_owner" in columns, "owner_id" not in columns
    if not (first_shape or owner_missing):
        return
    base = _revision_0006()
    if first_shape:
        _drop_first_indexes(sqlite)
    elif sqlite:
        _drop_triggers()
    with op.batch_alter_table("conversation_turns", schema=None) as batch_op:
        if first_shape:
            batch_op.drop_column("search_owner")
        if owner_missing:
            batch_op.add_column(sa.Column("owner_id", sa.BigInteger(), nullable=True))
            batch_op.create_index("ix_conversation_turns_owner", ["owner_id", "id"])
    if owner_missing:
        op.execute(
            "UPDATE conversation_turns SET owner_id = (SELECT owner_id FROM conversations "
            "WHERE conversations.id = conversation_turns.conversation_id)"
        )
    if first_shape:
        for statement in base.SQLITE_INDEXES if sqlite else base.POSTGRES_INDEXES:
            op.execute(statement)
        _index_memories(bind, base)
        base._fill_turns(bind)
    if sqlite:
        # The rebuilt table lost its triggers; the first statement rebuilds the index.
        for statement in base.SQLITE_TRIGGERS:
            op.execute(statement)


def _drop_triggers() -> None:
    """Drop the SQLite triggers that keep conversation_search in step."""
    for trigger in SQLITE_TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS conversation_turns_search_{trigger}")


def _drop_first_indexes(sqlite: bool) -> None:
    """Drop the search indexes of 0006's first version (with their owner columns)."""
    if sqlite:
        _drop_triggers()
        op.execute("DROP TABLE IF EXISTS conversation_search")
    else:
        op.execute("DROP INDEX IF EXISTS conversation_search_document")
        op.execute("ALTER TABLE conversation_turns DROP COLUMN IF EXISTS search_document")
    op.execute("DROP TABLE IF EXISTS agent_memory_search")


def _index_memories(bind: sa.Connection, base: ModuleType) -> None:
    """Index every memory's newest version again, each word with its owner's mark."""
    rows = bind.execute(
        sa.text(
            "SELECT m.id, m.owner_id, m.subject, v.content "
            "FROM agent_memories m JOIN agent_memory_versions v ON v.memory_id = m.id "
            "AND v.version_number = (SELECT max(version_number) FROM agent_memory_versions "
            "WHERE memory_id = m.id)"
        )
    ).all()
    for memory_id, owner_id, subject, content in rows:
        base._index_memory(bind, memory_id, owner_id, subject, content)


def downgrade() -> None:
    """Nothing to revert: the shapes it repaired are not brought back."""
