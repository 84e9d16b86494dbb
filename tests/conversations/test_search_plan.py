"""How a ranked conversation search reads the engines: which indexes, how many statements."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import event, text

from bot.conversations.blocks import text_block
from bot.conversations.search import _NOT_IN_CONTEXT, _SQLITE_RANKED, ConversationSearch
from bot.conversations.snapshot import ChatThread
from bot.conversations.store import ConversationStore
from memory.search_rank import Way, candidates_way, counts, ranked_statement
from memory.search_terms import search_terms
from tests.harness import OWNER


@pytest.fixture
def postgres(engine):
    """Skip on SQLite: FTS5 counts and ranks inside its own index there."""
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite's bm25() counts and ranks inside FTS5")
    return engine


async def _store(sessionmaker, texts: list[str]) -> None:
    """Store each text as a user's message of the owner, a day apart, in order."""
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30), clock=lambda: now[0])
    for words in texts:
        said = text_block(f"[Monday, 23 November 2026, 10:00 UTC]\n{words}")
        await conversations.store_user_message(ChatThread(OWNER), OWNER, [said])
        now[0] += timedelta(days=1)


TEXTS = [
    *[f"The heating broke again in flat {n}" for n in range(6)],
    "The landlord promised the heating gets fixed on Tuesday",
    *[f"Landlord meeting number {n} about the rent" for n in range(4)],
]


async def _bulk(sessionmaker, texts: list[str]) -> None:
    """Store each text as a turn of the model's in one conversation of the owner, in order."""
    from sqlalchemy import insert

    from bot.conversations.content import search_text
    from bot.conversations.models import Conversation, Turn

    at = datetime(2026, 1, 1, tzinfo=UTC)
    async with sessionmaker.begin() as session:
        chat = await session.scalar(
            insert(Conversation).returning(Conversation.id),
            {"chat_id": OWNER, "owner_id": OWNER, "memory_block": "", "started_at": at,
             "last_activity_at": at},
        )  # fmt: skip
        rows = []
        for words in texts:
            content = [text_block(words)]
            rows.append(
                {"conversation_id": chat, "role": "assistant", "content": content, "tokens": 5,
                 "created_at": at, "owner_id": OWNER,
                 "search_text": search_text("assistant", content, OWNER)}
            )  # fmt: skip
        await session.execute(insert(Turn), rows)


async def test_the_owners_turns_are_counted_once_a_while_not_every_search(postgres, sessionmaker):
    """Counting up to 20,000 of the owner's turns cost 10 to 60 ms of every search at 100,000."""
    await _store(sessionmaker, TEXTS)
    past = ConversationSearch(sessionmaker)
    await past.search(OWNER, "heating", 10)
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append(statement)

    event.listen(postgres.sync_engine, "before_cursor_execute", record)
    try:
        assert len(await past.search(OWNER, "landlord heating", 10)) == 10
    finally:
        event.remove(postgres.sync_engine, "before_cursor_execute", record)
    owners = [s for s in statements if "SELECT 1 FROM conversation_turns WHERE owner_id" in s]
    assert not owners, owners


async def _ranked(
    session, walk: bool | Way, *, plan: bool = False, query: str = "landlord heating"
) -> list:
    """Return the ranked ids (or the plan's lines) of the query found one way."""
    terms = search_terms(query)
    found = await counts(session, OWNER, terms)
    way = walk if isinstance(walk, Way) else Way(walk=walk)
    statement, parameters = ranked_statement(OWNER, terms, found, _NOT_IN_CONTEXT, way)
    parameters |= {"owner": OWNER, "skip": 0, "limit": 10}
    prefix = "EXPLAIN " if plan else ""
    rows = await session.execute(text(prefix + statement), parameters)
    return [row[0] for row in rows]


async def test_both_ways_to_the_candidates_rank_alike_and_each_keeps_to_one_index(
    postgres, sessionmaker
):
    """The owner's index and the word index combined read a bitmap of every owner's turn."""
    await _store(sessionmaker, TEXTS)
    async with sessionmaker() as session:
        assert await _ranked(session, True) == await _ranked(session, False)
        # Without sequential scans the planner takes every index it can use.
        await session.execute(text("SET LOCAL enable_seqscan = off"))
        walked = " ".join(await _ranked(session, True, plan=True))
        found = " ".join(await _ranked(session, False, plan=True))
    assert "ix_conversation_turns_owner" in walked, walked
    assert "conversation_search_document" not in walked, walked
    assert "conversation_search_document" in found, found
    assert "ix_conversation_turns_owner" not in found and "BitmapAnd" not in found, found


async def test_a_word_common_among_a_large_owners_newest_turns_is_not_counted(
    postgres, sessionmaker
):
    """Counting a common word's first 1,000 matches lists all of them: 20 to 180 ms at 100,000."""
    from memory.search_rank import COUNT_BOUND, SAMPLE

    size = SAMPLE + 200
    texts = [f"The heating is on in room {n}" for n in range(size - 3)]
    texts += [f"The landlord called about flat {n}" for n in range(3)]
    await _bulk(sessionmaker, texts)
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append(statement)

    event.listen(postgres.sync_engine, "before_cursor_execute", record)
    try:
        async with sessionmaker() as session:
            found = await counts(session, OWNER, search_terms("heating landlord"))
    finally:
        event.remove(postgres.sync_engine, "before_cursor_execute", record)
    # The owner's size is bounded; "heating" is taken as common, "landlord" counted.
    assert found == [size, COUNT_BOUND, 3]
    bounded = [s for s in statements if f"LIMIT {COUNT_BOUND}" in s]
    assert len(bounded) == 1 and bounded[0].count("to_tsquery") == 1, bounded


# A word in a seventh of 10,000 turns: common, yet too rare among the newest for reading them
# newest first to be the cheaper way, and its candidates among fewer turns than the owner's.
_SOMETIMES_HEATING = [
    f"The heating is on in room {n}" if n % 7 == 0 else f"A walk in the park {n}"
    for n in range(10000)
]


async def test_a_common_word_is_found_among_the_owners_newest_turns_through_both_indexes(
    postgres, sessionmaker
):
    """At 100,000 turns every match of "heating" (8,352) was read to keep the newest 1,000."""
    await _bulk(sessionmaker, _SOMETIMES_HEATING)
    terms = search_terms("heating")
    async with sessionmaker() as session:
        # Statistics, as autovacuum leaves them: the planner weighs the two indexes by them.
        await session.execute(text("ANALYZE conversation_turns"))
        await session.execute(text("SET LOCAL enable_seqscan = off"))
        found = await counts(session, OWNER, terms)
        way = await candidates_way(session, OWNER, terms, found)
        assert not way.walk and way.reach is not None, (found, way)
        # The newest 8,334 turns hold 1,190 matches: the newest 1,000 are every match's.
        assert await _ranked(session, way, query="heating") == await _ranked(
            session, False, query="heating"
        )
        plan = " ".join(await _ranked(session, way, plan=True, query="heating"))
        # The owner's index bounds the turns read, from the floor on (at 100,000 the planner
        # combines it with the word index, a BitmapAnd: docs/performance.md); never the
        # primary key, which would hold every owner's turns past the floor.
        floor = "Index Cond: ((ROW(owner_id, id) >= ROW("
        assert floor in plan and "ix_conversation_turns_owner" in plan, plan
        assert "pk_conversation_turns" not in plan, plan
        # A shorter reach: only matches among the owner's newest turns that many.
        newest = await session.scalars(
            text(
                "SELECT id FROM conversation_turns WHERE owner_id = :owner "
                "ORDER BY id DESC LIMIT 301"
            ),
            {"owner": OWNER},
        )
        window = set(list(newest)[:-1])
        near = await _ranked(session, Way(reach=300), query="heating")
    assert near and set(near) <= window, near


async def test_the_owners_newest_turns_are_read_once_for_a_common_word(postgres, sessionmaker):
    """Counting the words and choosing the way read the same 1,000 newest turns twice."""
    await _bulk(sessionmaker, _SOMETIMES_HEATING)
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append(statement)

    event.listen(postgres.sync_engine, "before_cursor_execute", record)
    try:
        hits = await ConversationSearch(sessionmaker).search(OWNER, "heating", 10)
    finally:
        event.remove(postgres.sync_engine, "before_cursor_execute", record)
    assert len(hits) == 10 and all("heating" in hit.excerpt for hit in hits), hits
    newest = [s for s in statements if "AS newest" in s]
    assert len(newest) == 1, newest
    assert any("OFFSET" in s for s in statements), statements  # the reach's floor was used


async def test_a_common_word_seldom_said_lately_is_found_through_the_word_index_alone(
    postgres, sessionmaker
):
    """A floor past all of the owner's turns would read a bitmap of every one for nothing."""
    texts = [f"The heating is on in room {n}" for n in range(1100)]
    texts += ["The heating is off at last"] + [f"A walk in the park {n}" for n in range(999)]
    await _bulk(sessionmaker, texts)
    terms = search_terms("heating")
    async with sessionmaker() as session:
        found = await counts(session, OWNER, terms)
        way = await candidates_way(session, OWNER, terms, found)
    assert found[0] == 2100 and found[1] >= 1000
    assert way == Way(), way


async def test_sqlite_checks_the_candidates_owner_in_the_owners_index_not_their_rows(
    engine, sessionmaker
):
    """Reading 1,000 candidates' rows for their owner cost 1 to 7 ms at 100,000 turns."""
    if engine.dialect.name != "sqlite":
        pytest.skip("Postgres finds its candidates by the owner's turns (above)")
    async with sessionmaker() as session:
        parameters = {"query": '"o1zheat"', "candidates": 1000, "owner": 1, "skip": 0, "limit": 10}
        rows = await session.execute(text("EXPLAIN QUERY PLAN " + _SQLITE_RANKED), parameters)
        plan = [row[-1] for row in rows]
    turns = [step for step in plan if "turns" in step or "conversation_turns" in step]
    assert any("COVERING INDEX ix_conversation_turns_owner" in step for step in turns), plan
    assert not any("INTEGER PRIMARY KEY" in step for step in turns), plan
