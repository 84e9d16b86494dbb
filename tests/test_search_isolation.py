"""One owner's text never reaches another owner's search, whatever characters it holds.

The engines split words by their own Unicode tables (SQLite FTS5's, the Postgres parser's
locale), which differ from Python's and from each other's: a character one calls part of a
word another calls a break. Search must not depend on them agreeing.
"""

import json
import sys
from datetime import timedelta

import pytest
from sqlalchemy import text

from bot.conversations.search import ConversationSearch
from bot.conversations.snapshot import ChatThread
from bot.conversations.store import ConversationStore
from bot.migrations import downgrade_engine, upgrade_engine
from memory.categories import Category
from memory.db import create_engine, create_sessionmaker
from memory.search_terms import index_text, owner_mark
from memory.store import MemoryStore

ALICE, MALLORY = 111, 666
# Letters to Python; a break to FTS5 (U+19B0, a mark in Unicode 6.1) or to the Postgres
# parser (U+09F4, a number sign it does not count as a word character).
SPLITTERS = ("\u19b0", "\u09f4")


def planted(victim: int, word: str) -> str:
    """Return text whose words, split by an engine, include the victim's marked word."""
    return " ".join(f"x{splitter}{owner_mark(victim)}{word}" for splitter in SPLITTERS)


async def test_another_owners_planted_words_never_empty_a_memory_search(store):
    plan = await store.add(ALICE, "The secret plan is to move to Lisbon", Category.PROJECT)
    for n in range(12):
        bait = planted(ALICE, "secret")
        await store.add(MALLORY, bait, Category.CONTEXT, subject=f"{bait} {n}")
    assert [item.id for item in await store.search(ALICE, "secret", 10)] == [plan.id]
    assert await store.search(MALLORY, "secret", 10) == []


async def test_another_owners_planted_words_never_empty_a_conversation_search(sessionmaker):
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30))
    said = [{"type": "text", "text": "[Monday]\nThe secret plan is to move to Lisbon"}]
    await conversations.store_user_message(ChatThread(ALICE), ALICE, said)
    bait = [{"type": "text", "text": f"[Monday]\n{planted(ALICE, 'secret')}"}]
    for _ in range(40):
        await conversations.store_user_message(ChatThread(MALLORY), MALLORY, bait)
    hits = await ConversationSearch(sessionmaker).search(ALICE, "secret", 10)
    assert [hit.excerpt for hit in hits] == ["The secret plan is to move to Lisbon"]


def _every_character() -> list[str]:
    """Return every Unicode character that can be stored (no surrogates)."""
    return [chr(n) for n in range(sys.maxunicode + 1) if not 0xD800 <= n <= 0xDFFF]


def _documents(characters: list[str], size: int = 64) -> list[str]:
    """Return texts of size words each, every character inside a word of its own."""
    words = [f"a{character}b" for character in characters]
    return [" ".join(words[i : i + size]) for i in range(0, len(words), size)]


async def _engine_words(connection, documents: list[str]) -> list[set[str]]:
    """Return the words the engine's full-text index makes of each document."""
    if connection.dialect.name == "postgresql":
        found = await connection.execute(
            text(
                "SELECT tsvector_to_array(to_tsvector('simple', d)) FROM unnest("
                "CAST(:documents AS text[])) WITH ORDINALITY AS x(d, n) ORDER BY n"
            ),
            {"documents": documents},
        )
        return [set(words) for (words,) in found]
    # The memory index itself: its tokenizer, as the migrations created it.
    rows = [{"rowid": n + 1, "content": d} for n, d in enumerate(documents)]
    await connection.execute(
        text(
            "INSERT INTO agent_memory_search(rowid, subject, content) VALUES (:rowid, '', :content)"
        ),
        rows,
    )
    await connection.execute(
        text("CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, agent_memory_search, instance)")
    )
    words: list[set[str]] = [set() for _ in documents]
    # A row per document, its terms as a JSON array, rather than a row per word (millions).
    terms = text("SELECT doc, json_group_array(term) FROM temp.words GROUP BY doc")
    for doc, array in await connection.execute(terms):
        words[doc - 1].update(json.loads(array))
    await connection.execute(text("DROP TABLE temp.words"))
    await connection.execute(text("DELETE FROM agent_memory_search"))
    return words


def _indexed(characters: list[str], size: int) -> list[str]:
    """Return the index text of each document of the characters."""
    return [index_text(document, ALICE) for document in _documents(characters, size)]


async def _mismatches(
    connection, characters: list[str], size: int = 64, texts: list[str] | None = None
) -> list[str]:
    """Return the characters whose words the engine splits otherwise than the index text."""
    texts = texts if texts is not None else _indexed(characters, size)
    found = await _engine_words(connection, texts)
    pairs = zip(texts, found, strict=True)
    wrong = [n for n, (indexed, words) in enumerate(pairs) if set(indexed.split()) != words]
    suspects = [c for n in wrong for c in characters[n * size : (n + 1) * size]]
    return suspects if size == 1 or not suspects else await _mismatches(connection, suspects, 1)


@pytest.fixture(scope="module")
def every_character_indexed() -> tuple[list[str], list[str]]:
    """Return every character, and its documents' index texts: the same for each engine.

    Made once for the module (3.5 s of CPU), not once per engine.
    """
    characters = _every_character()
    return characters, _indexed(characters, 64)


async def test_the_engines_split_indexed_text_where_python_does_for_all_of_unicode(
    engine, every_character_indexed
):
    characters, texts = every_character_indexed
    async with engine.connect() as connection:
        wrong = await _mismatches(connection, characters, texts=texts)
        await connection.rollback()
    assert [f"U+{ord(c):04X}" for c in wrong] == []


async def test_the_migration_indexes_what_was_stored_before_it_again(empty_database_url):
    engine = create_engine(empty_database_url)
    try:
        await upgrade_engine(engine)
        sessionmaker = create_sessionmaker(engine)
        cafe = await MemoryStore(sessionmaker).add(ALICE, "Café in Zürich", Category.CONTEXT)
        conversations = ConversationStore(sessionmaker, timedelta(minutes=30))
        said = [{"type": "text", "text": "[Monday]\nWe met in Zürich"}]
        await conversations.store_user_message(ChatThread(ALICE), ALICE, said)
        await downgrade_engine(engine, "0008")  # the index as it was: words not spelled
        await upgrade_engine(engine)
        found = await MemoryStore(sessionmaker).search(ALICE, "zurich", 10)
        assert [item.id for item in found] == [cafe.id]
        hits = await ConversationSearch(sessionmaker).search(ALICE, "Zürich", 10)
        assert [hit.excerpt for hit in hits] == ["We met in Zürich"]
    finally:
        await engine.dispose()
