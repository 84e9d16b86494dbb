"""Search apart per owner whatever the engines call a word: owner column, words spelled in ASCII.

SQLite's memory index gains an unindexed owner_id column, so a search keeps to its owner in
SQL before any limit (Postgres joins the memories for it, and both filter turns by
conversation_turns.owner_id). Every indexed word is now spelled in ASCII letters and digits
(memory/search_terms.py), so the engines split it where Python does: left to their own
Unicode tables they split some words Python keeps whole, and another owner's words could be
planted in an owner's part of the index. Every memory and turn is indexed again here.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 00:40:00.000000
"""

import json
import re
import unicodedata
from collections.abc import Callable, Sequence

import sqlalchemy as sa

from alembic import op
from memory.search_terms import index_text

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TOKENIZER = "tokenize='unicode61 remove_diacritics 2'"
SQLITE_WITH_OWNER = (
    f"CREATE VIRTUAL TABLE agent_memory_search USING fts5(subject, content, owner_id UNINDEXED, "
    f"{TOKENIZER})"
)
SQLITE_WITHOUT_OWNER = (
    f"CREATE VIRTUAL TABLE agent_memory_search USING fts5(subject, content, {TOKENIZER})"
)
TURNS_PER_BATCH = 1000

# How 0006 indexed words, for the downgrade: folded, not spelled.
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_UNSPACED_CHAR = re.compile(f"([{_UNSPACED}])")
_WORD = re.compile(r"[^\W_]+")


def _index_text_0006(text: str, owner_id: int) -> str:
    """Return text as migration 0006 indexed it: folded words, each with its owner's mark."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    folded = unicodedata.normalize("NFKC", bare).casefold()
    mark = f"o{owner_id}z".replace("-", "n")
    return " ".join(mark + word for word in _WORD.findall(_UNSPACED_CHAR.sub(r" \1 ", folded)))


def _id_number(memory_id: str) -> int:
    """Return a memory id as the integer SQLite's index keys its row by (base 62)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    number = 0
    for char in memory_id:
        number = number * 62 + alphabet.index(char)
    return number


def _index_memories(bind: sa.Connection, words: Callable[[str, int], str], owner: bool) -> None:
    """Index every active memory's newest version again (the index is empty)."""
    rows = bind.execute(
        sa.text(
            "SELECT m.id, m.owner_id, m.subject, v.content "
            "FROM agent_memories m JOIN agent_memory_versions v ON v.memory_id = m.id "
            "AND v.version_number = (SELECT max(version_number) FROM agent_memory_versions "
            "WHERE memory_id = m.id) WHERE m.deleted_at IS NULL"
        )
    ).all()
    sqlite = bind.dialect.name == "sqlite"
    values = [
        {
            "key": _id_number(memory_id) if sqlite else memory_id,
            "owner": owner_id,
            "subject": words(subject or "", owner_id),
            "content": words(content, owner_id),
        }
        for memory_id, owner_id, subject, content in rows
    ]
    columns = ("rowid" if sqlite else "memory_id") + (", owner_id" if owner else "")
    keys = ":key" + (", :owner" if owner else "")
    if values:
        bind.execute(
            sa.text(
                f"INSERT INTO agent_memory_search({columns}, subject, content) "
                f"VALUES ({keys}, :subject, :content)"
            ),
            values,
        )


def _turn_words(role: str, content) -> str:
    """Return what a turn said in words, without the time line a user's turn opens with."""
    blocks = json.loads(content) if isinstance(content, str) else content
    texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
    if role == "user" and texts:
        texts[0] = texts[0].partition("\n")[2]
    return " ".join(texts)


def _index_turns(bind: sa.Connection, words: Callable[[str, int], str]) -> None:
    """Give every turn with words its search text again, a batch at a time."""
    after = 0
    while True:
        rows = bind.execute(
            sa.text(
                "SELECT id, role, content, owner_id, search_text FROM conversation_turns "
                "WHERE id > :after AND search_text IS NOT NULL AND owner_id IS NOT NULL "
                "ORDER BY id LIMIT :batch"
            ),
            {"after": after, "batch": TURNS_PER_BATCH},
        ).all()
        if not rows:
            return
        fresh = [
            (turn_id, words(_turn_words(role, content), owner_id) or None, old)
            for turn_id, role, content, owner_id, old in rows
        ]
        changed = [{"id": turn_id, "text": new} for turn_id, new, old in fresh if new != old]
        if changed:
            bind.execute(
                sa.text("UPDATE conversation_turns SET search_text = :text WHERE id = :id"),
                changed,
            )
        after = rows[-1][0]


def _reindex(words: Callable[[str, int], str], *, owner: bool) -> None:
    """Rebuild the memory index (with or without SQLite's owner column) and the turns' texts."""
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        op.execute("DROP TABLE agent_memory_search")
        op.execute(SQLITE_WITH_OWNER if owner else SQLITE_WITHOUT_OWNER)
        _index_memories(bind, words, owner)
    else:
        op.execute("DELETE FROM agent_memory_search")
        _index_memories(bind, words, False)
    _index_turns(bind, words)


def upgrade() -> None:
    """Apply this revision."""
    _reindex(index_text, owner=True)


def downgrade() -> None:
    """Revert this revision."""
    _reindex(_index_text_0006, owner=False)
