"""Memory without a ceiling: pins, stored token counts, and full-text search of memories and turns.

agent_memories gains pinned, tokens (its block line's tokens, counted once per change),
changed_at (its newest version's time) and subject_key (the subject folded, for the
same-subject check in SQL). agent_memory_search indexes every memory's subject and content;
conversation_turns gain search_text, indexed by conversation_search, and their conversation's
owner_id (so Postgres can read one owner's turns newest first). On SQLite both indexes
are FTS5 tables; on Postgres a tsvector with a GIN index. Every indexed word carries its
owner's mark (memory/search_terms.py). Existing rows are indexed here.

On SQLite, triggers keep conversation_search in step with conversation_turns; a later
migration that rebuilds conversation_turns (batch mode) must create them again.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 20:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from memory.search_terms import index_text
from memory.tokens import count_tokens

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE_INDEXES = [
    "CREATE VIRTUAL TABLE agent_memory_search USING fts5("
    "subject, content, tokenize='unicode61 remove_diacritics 2')",
    "CREATE VIRTUAL TABLE conversation_search USING fts5(search_text, "
    "content='conversation_turns', content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
]
# The external-content index follows its table through triggers, inside each statement.
# They come after the index is built from the filled rows: a trigger's 'delete' of values
# the index never held would corrupt it.
SQLITE_TRIGGERS = [
    "INSERT INTO conversation_search(conversation_search) VALUES ('rebuild')",
    "CREATE TRIGGER conversation_turns_search_insert AFTER INSERT ON conversation_turns BEGIN "
    "INSERT INTO conversation_search(rowid, search_text) VALUES (new.id, new.search_text); END",
    "CREATE TRIGGER conversation_turns_search_delete AFTER DELETE ON conversation_turns BEGIN "
    "INSERT INTO conversation_search(conversation_search, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); END",
    "CREATE TRIGGER conversation_turns_search_update AFTER UPDATE OF search_text "
    "ON conversation_turns BEGIN "
    "INSERT INTO conversation_search(conversation_search, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); "
    "INSERT INTO conversation_search(rowid, search_text) VALUES (new.id, new.search_text); END",
]
POSTGRES_INDEXES = [
    "CREATE TABLE agent_memory_search ("
    "memory_id VARCHAR(8) NOT NULL, subject TEXT NOT NULL, content TEXT NOT NULL, "
    "document tsvector GENERATED ALWAYS AS ("
    "setweight(to_tsvector('simple', subject), 'A') || "
    "setweight(to_tsvector('simple', content), 'B')) STORED, "
    "CONSTRAINT pk_agent_memory_search PRIMARY KEY (memory_id), "
    "CONSTRAINT fk_agent_memory_search_memory_id_agent_memories FOREIGN KEY (memory_id) "
    "REFERENCES agent_memories (id) ON DELETE CASCADE)",
    "CREATE INDEX agent_memory_search_document ON agent_memory_search USING gin (document)",
    "ALTER TABLE conversation_turns ADD COLUMN search_document tsvector GENERATED ALWAYS AS ("
    "to_tsvector('simple', coalesce(search_text, ''))) STORED",
    "CREATE INDEX conversation_search_document ON conversation_turns USING gin (search_document)",
]


def _id_number(memory_id: str) -> int:
    """Return a memory id as the integer SQLite's index keys its row by (base 62)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    number = 0
    for char in memory_id:
        number = number * 62 + alphabet.index(char)
    return number


def _memory_line(memory_id: str, subject: str | None, content: str) -> str:
    """Render a memory's block line as memory.block did when this revision was written."""
    import json

    def quoted(text: str) -> str:
        return json.dumps(" ".join(text.split()), ensure_ascii=False)

    subject_part = f"{quoted(subject)}: " if subject else ""
    return f"- [id:{memory_id}] {subject_part}{quoted(content)}"


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("agent_memories", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("pinned", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch_op.add_column(sa.Column("tokens", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("changed_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("subject_key", sa.String(length=200), nullable=True))
        batch_op.create_index(
            "ix_agent_memories_owner_block_choice",
            ["owner_id", "deleted_at", "pinned", "changed_at", "id"],
        )
        batch_op.create_index("ix_agent_memories_owner_subject", ["owner_id", "subject_key"])
    with op.batch_alter_table("conversation_turns", schema=None) as batch_op:
        batch_op.add_column(sa.Column("search_text", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("owner_id", sa.BigInteger(), nullable=True))
        batch_op.create_index("ix_conversation_turns_owner", ["owner_id", "id"])
    bind = op.get_bind()
    for statement in SQLITE_INDEXES if bind.dialect.name == "sqlite" else POSTGRES_INDEXES:
        op.execute(statement)
    _fill_memories(bind)
    op.execute(
        "UPDATE conversation_turns SET owner_id = (SELECT owner_id FROM conversations "
        "WHERE conversations.id = conversation_turns.conversation_id)"
    )
    _fill_turns(bind)
    with op.batch_alter_table("agent_memories", schema=None) as batch_op:
        batch_op.alter_column(
            "changed_at", existing_type=sa.DateTime(timezone=True), nullable=False
        )
    for statement in SQLITE_TRIGGERS if bind.dialect.name == "sqlite" else []:
        op.execute(statement)


def _fill_memories(bind: sa.Connection) -> None:
    """Count, key and index every memory there is."""
    rows = bind.execute(
        sa.text(
            "SELECT m.id, m.owner_id, m.subject, v.content, v.created_at "
            "FROM agent_memories m JOIN agent_memory_versions v ON v.memory_id = m.id "
            "AND v.version_number = (SELECT max(version_number) FROM agent_memory_versions "
            "WHERE memory_id = m.id)"
        )
    ).all()
    for memory_id, owner_id, subject, content, changed_at in rows:
        key = " ".join(subject.split()).casefold() if subject else None
        bind.execute(
            sa.text(
                "UPDATE agent_memories SET tokens = :tokens, changed_at = :changed, "
                "subject_key = :key WHERE id = :id"
            ),
            {
                "tokens": count_tokens(_memory_line(memory_id, subject, content)),
                "changed": changed_at,
                "key": key,
                "id": memory_id,
            },
        )
        _index_memory(bind, memory_id, owner_id, subject, content)


def _index_memory(
    bind: sa.Connection, memory_id: str, owner_id: int, subject: str | None, content: str
) -> None:
    """Add one memory to the memory index."""
    values = {
        "subject": index_text(subject or "", owner_id),
        "content": index_text(content, owner_id),
    }
    if bind.dialect.name == "sqlite":
        values["key"] = _id_number(memory_id)
        statement = (
            "INSERT INTO agent_memory_search(rowid, subject, content) "
            "VALUES (:key, :subject, :content)"
        )
    else:
        values["key"] = memory_id
        statement = (
            "INSERT INTO agent_memory_search(memory_id, subject, content) "
            "VALUES (:key, :subject, :content)"
        )
    bind.execute(sa.text(statement), values)


def _fill_turns(bind: sa.Connection) -> None:
    """Give every stored turn with words its search text."""
    import json

    rows = bind.execute(
        sa.text(
            "SELECT t.id, t.role, t.content, c.owner_id FROM conversation_turns t "
            "JOIN conversations c ON c.id = t.conversation_id"
        )
    ).all()
    for turn_id, role, content, owner_id in rows:
        blocks = json.loads(content) if isinstance(content, str) else content
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        if role == "user" and texts and texts[0].startswith("["):
            texts[0] = texts[0].partition("\n")[2]  # the time line is not what was said
        words = index_text(" ".join(texts), owner_id)
        if words:
            bind.execute(
                sa.text("UPDATE conversation_turns SET search_text = :text WHERE id = :id"),
                {"text": words, "id": turn_id},
            )


def downgrade() -> None:
    """Revert this revision."""
    if op.get_bind().dialect.name == "sqlite":
        for trigger in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER conversation_turns_search_{trigger}")
        op.execute("DROP TABLE conversation_search")
    else:
        op.execute("DROP INDEX conversation_search_document")
        op.execute("ALTER TABLE conversation_turns DROP COLUMN search_document")
    op.execute("DROP TABLE agent_memory_search")
    with op.batch_alter_table("conversation_turns", schema=None) as batch_op:
        batch_op.drop_index("ix_conversation_turns_owner")
        batch_op.drop_column("owner_id")
        batch_op.drop_column("search_text")
    with op.batch_alter_table("agent_memories", schema=None) as batch_op:
        batch_op.drop_index("ix_agent_memories_owner_subject")
        batch_op.drop_index("ix_agent_memories_owner_block_choice")
        batch_op.drop_column("subject_key")
        batch_op.drop_column("changed_at")
        batch_op.drop_column("tokens")
        batch_op.drop_column("pinned")
