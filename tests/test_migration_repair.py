"""Databases migrated by an earlier edit of 0006 are repaired by 0008, on both engines."""

from datetime import UTC, datetime

import pytest
from sqlalchemy import text

from bot.conversations.search import ConversationSearch
from bot.migrations import downgrade_engine, upgrade_engine
from memory.categories import Category
from memory.db import create_engine, create_sessionmaker
from memory.search_terms import index_text
from memory.store import MemoryStore
from tests.test_engines import _schema

WHEN = datetime(2026, 11, 23, 12, 0, tzinfo=UTC).replace(tzinfo=None)
OWNER = 111

# 0006 as first landed: index tables with an owner column, turns with search_owner.
FIRST_SQLITE = [
    "DROP TRIGGER conversation_turns_search_insert",
    "DROP TRIGGER conversation_turns_search_delete",
    "DROP TRIGGER conversation_turns_search_update",
    "DROP TABLE conversation_search",
    "DROP TABLE agent_memory_search",
    "DROP INDEX ix_conversation_turns_owner",
    "ALTER TABLE conversation_turns DROP COLUMN owner_id",
    "ALTER TABLE conversation_turns ADD COLUMN search_owner VARCHAR(24)",
    "CREATE VIRTUAL TABLE agent_memory_search USING fts5("
    "owner, subject, content, tokenize='unicode61 remove_diacritics 2')",
    "CREATE VIRTUAL TABLE conversation_search USING fts5(search_owner, search_text, "
    "content='conversation_turns', content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    "CREATE TRIGGER conversation_turns_search_insert AFTER INSERT ON conversation_turns BEGIN "
    "INSERT INTO conversation_search(rowid, search_owner, search_text) "
    "VALUES (new.id, new.search_owner, new.search_text); END",
]
FIRST_POSTGRES = [
    "DROP INDEX conversation_search_document",
    "ALTER TABLE conversation_turns DROP COLUMN search_document",
    "DROP TABLE agent_memory_search",
    "ALTER TABLE conversation_turns DROP COLUMN owner_id",
    "ALTER TABLE conversation_turns ADD COLUMN search_owner VARCHAR(24)",
    "CREATE TABLE agent_memory_search (memory_id VARCHAR(8) NOT NULL, owner_id BIGINT NOT NULL, "
    "subject TEXT NOT NULL, content TEXT NOT NULL, document tsvector GENERATED ALWAYS AS ("
    "setweight(to_tsvector('simple', 'o' || replace(owner_id::text, '-', 'n')), 'D') || "
    "setweight(to_tsvector('simple', subject), 'A') || "
    "setweight(to_tsvector('simple', content), 'B')) STORED, "
    "CONSTRAINT pk_agent_memory_search PRIMARY KEY (memory_id))",
    "ALTER TABLE conversation_turns ADD COLUMN search_document tsvector GENERATED ALWAYS AS ("
    "setweight(to_tsvector('simple', coalesce(search_owner, '')), 'D') || "
    "to_tsvector('simple', coalesce(search_text, ''))) STORED",
    "CREATE INDEX conversation_search_document ON conversation_turns USING gin (search_document)",
]
# 0006 as edited once: the current indexes, but turns without their owner.
SECOND_SQLITE = [
    "DROP INDEX ix_conversation_turns_owner",
    "ALTER TABLE conversation_turns DROP COLUMN owner_id",
]
SECOND_POSTGRES = ["ALTER TABLE conversation_turns DROP COLUMN owner_id"]

ROWS = [
    "INSERT INTO conversations (id, chat_id, owner_id, memory_block, started_at, "
    "last_activity_at) VALUES (1, 111, 111, '', :when, :when)",
    "INSERT INTO conversation_turns (conversation_id, role, content, tokens, created_at, "
    "owner_id, search_text) VALUES (1, 'user', :content, 9, :when, 111, :words)",
]
VALUES = {
    "when": WHEN,
    "content": '[{"type": "text", "text": "[time]\\nthe lease ends in March"}]',
    "words": index_text("the lease ends in March", OWNER),
}


@pytest.mark.parametrize("shape", ["first", "second"])
async def test_a_database_at_an_earlier_0006_is_brought_to_the_current_shape(
    empty_database_url, shape
):
    engine = create_engine(empty_database_url)
    try:
        await upgrade_engine(engine)
        async with engine.connect() as connection:
            fresh = await connection.run_sync(_schema)
        sessionmaker = create_sessionmaker(engine)
        # Added at head: the code writes today's index, which 0009's downgrade turns back.
        alec = await MemoryStore(sessionmaker).add(
            OWNER, "Alec is the user's boss", Category.PERSON, "Alec"
        )
        await downgrade_engine(engine, "0006")
        sqlite = engine.dialect.name == "sqlite"
        async with engine.begin() as connection:
            for statement in ROWS:
                await connection.execute(text(statement), VALUES)
        statements = {
            ("first", True): FIRST_SQLITE, ("first", False): FIRST_POSTGRES,
            ("second", True): SECOND_SQLITE, ("second", False): SECOND_POSTGRES,
        }[(shape, sqlite)]  # fmt: skip
        async with engine.begin() as connection:
            for statement in statements:
                await connection.execute(text(statement))
        await upgrade_engine(engine)
        async with engine.connect() as connection:
            repaired = await connection.run_sync(_schema)
            owners = (
                await connection.execute(text("SELECT owner_id FROM conversation_turns"))
            ).all()
        assert repaired == fresh
        assert owners == [(OWNER,)]
        # Search works on the repaired database, for memories and past conversations alike.
        found = await MemoryStore(sessionmaker).search(OWNER, "Alec boss", 10)
        assert [item.id for item in found] == [alec.id]
        turns = await ConversationSearch(sessionmaker).search(OWNER, "lease", 10)
        assert len(turns) == 1 and "lease" in turns[0].excerpt
        # Running it again changes nothing.
        await upgrade_engine(engine)
    finally:
        await engine.dispose()
