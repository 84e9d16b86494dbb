"""Full-text search of memories on both engines: ranking, languages, tiers and owners."""

import pytest
from sqlalchemy import event

from memory.categories import Category
from memory.search_terms import (
    MAX_QUERY_TERMS,
    Term,
    fold,
    index_text,
    query_terms,
    search_terms,
)

ALICE, BOB = 111, 222


async def ids(store, owner: int, query: str) -> list[str]:
    return [item.id for item in await store.search(owner, query, 10)]


def test_text_is_folded_and_unspaced_scripts_split_into_characters():
    # Spelled in ASCII: "z" and four base-36 digits stand for "z" and every non-ASCII letter.
    # Stemmed: "elodie" is "elodi" (so is "Élodie's" possessive-free form, and the query's).
    assert index_text("Élodie\u2019s BOSS — 東京タワー, 회의 Pizza", -5) == (
        "on5zelodi on5zs on5zboss on5zz0kfl on5zz0fjg on5zz09mn on5zz09nz on5zz09oc "
        "on5zz16doz13dk on5zpiz003ez003ea"
    )
    assert query_terms("Boss 東京 x") == [("boss",), ("東", "京"), ("x",)]


def test_ascii_text_folds_as_any_text_does():
    # ASCII text takes a short way (no accents to drop); it must agree with the long one,
    # here taken by the same characters after a non-ASCII one.
    ascii_text = "".join(chr(code) for code in range(128)) + "IRON Kitchen's"
    assert fold(ascii_text) == fold("é" + ascii_text)[1:] == ascii_text.casefold()
    assert fold("Café Ａ①") == "cafe a1"


def test_queries_lose_stopwords_are_stemmed_and_only_long_stems_are_prefixes():
    assert search_terms("What did Caroline say about the camping trips?") == [
        Term(("carolin",), prefix=True),
        Term(("say",)),
        Term(("camp",)),
        Term(("trip",)),
    ]
    assert search_terms("Что сказал хозяин квартиры?") == [
        Term(("сказа",), prefix=True),
        Term(("хозяин",), prefix=True),
        Term(("квартир",), prefix=True),
    ]
    # A query of stopwords only keeps them: they are all it has.
    assert search_terms("the who") == [Term(("the",)), Term(("who",))]


async def test_subject_matches_rank_above_content_and_prefixes_match(store):
    sarah = await store.add(ALICE, "Sarah reports to Alec on Design", Category.PERSON, "Sarah")
    alec = await store.add(ALICE, "Alec is the user's boss at TechCorp", Category.PERSON, "Alec")
    bosses = await store.add(ALICE, "The user has had many bosses", Category.CONTEXT)
    await store.add(ALICE, "The user prefers green tea", Category.PREFERENCE)
    assert await ids(store, ALICE, "alec") == [alec.id, sarah.id]
    assert set(await ids(store, ALICE, "boss")) == {alec.id, bosses.id}
    assert await ids(store, ALICE, "coffee") == []
    assert await ids(store, ALICE, "  ") == []


async def test_case_and_accents_do_not_matter_in_any_script(store):
    cafe = await store.add(ALICE, "Élodie runs the Café Noir", Category.PERSON, "Élodie")
    tokyo = await store.add(ALICE, "ユーザーは東京タワーの近くに住んでいる", Category.CONTEXT)
    meeting = await store.add(ALICE, "用户每周一开会讨论项目", Category.PROJECT)
    greek = await store.add(
        ALICE, "\u039f \u039d\u03af\u03ba\u03bf\u03c2 is the manager", Category.PERSON
    )
    assert await ids(store, ALICE, "ELODIE cafe") == [cafe.id]
    assert await ids(store, ALICE, "東京") == [tokyo.id]
    assert await ids(store, ALICE, "タワー") == [tokyo.id]
    assert await ids(store, ALICE, "开会") == [meeting.id]
    assert await ids(store, ALICE, "\u03bd\u03b9\u03ba\u03bf\u03c3") == [greek.id]  # νικοσ
    assert await ids(store, ALICE, "京東") == []  # a phrase, not any of its characters


async def test_changes_are_searchable_at_once_and_forgotten_ones_are_not(store):
    tea = await store.add(ALICE, "The user prefers green tea", Category.PREFERENCE, "tea")
    await store.update(ALICE, tea.id, "The user prefers black coffee")
    assert await ids(store, ALICE, "green") == []
    assert await ids(store, ALICE, "coffee") == [tea.id]
    await store.delete(ALICE, tea.id)
    assert await ids(store, ALICE, "coffee") == []
    await store.restore(ALICE, tea.id)
    assert await ids(store, ALICE, "coffee") == [tea.id]
    await store.clear(ALICE)
    assert await ids(store, ALICE, "coffee") == []


async def test_another_owners_near_identical_memories_are_never_found(store):
    mine = await store.add(ALICE, "Alec is the boss of the user", Category.PERSON, "Alec")
    theirs = await store.add(BOB, "Alec is the boss of the user", Category.PERSON, "Alec")
    assert await ids(store, ALICE, "alec boss") == [mine.id]
    assert await ids(store, BOB, "alec boss") == [theirs.id]
    assert await ids(store, -BOB, "alec boss") == []


async def test_a_huge_query_is_cut_to_a_few_terms_and_still_answers(store):
    tea = await store.add(ALICE, "The user prefers green tea", Category.PREFERENCE)
    huge = "tea " + " ".join(f"word{n}" for n in range(20_000))
    assert len(query_terms(huge)) == MAX_QUERY_TERMS
    assert await ids(store, ALICE, huge) == [tea.id]


async def test_a_rare_word_outweighs_a_common_one_repeated(store):
    lisbon = await store.add(ALICE, "The user flew to Lisbon", Category.CONTEXT)
    await store.add(ALICE, "Tea, tea and more tea every morning", Category.PREFERENCE)
    for n in range(8):
        await store.add(ALICE, f"The user drinks tea at meeting {n}", Category.CONTEXT)
    assert (await ids(store, ALICE, "Lisbon tea"))[0] == lisbon.id


async def test_the_memories_found_are_read_by_id_not_through_the_owners_index(store, engine):
    """SQLite without statistics read all of the owner's memories to load the ten found."""
    if engine.dialect.name != "sqlite":
        pytest.skip("Postgres plans with statistics (ANALYZE); SQLite's plan is the one at risk")
    for n in range(10):
        await store.add(ALICE, f"The user visited Lisbon in year {n}", Category.CONTEXT)
    statements: list[tuple[str, tuple]] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        if "agent_memory_versions" in statement:
            statements.append((statement, parameters))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        assert len(await ids(store, ALICE, "Lisbon")) == 10
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)
    (statement, parameters), *_ = statements
    async with engine.connect() as connection:
        plan = await connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
        steps = [row[-1] for row in plan]
    memories = [step for step in steps if " agent_memories " in f"{step} "]
    assert memories and all("(id=?)" in step for step in memories), steps


async def test_a_postgres_search_is_one_statement_once_the_owners_size_is_known(store, engine):
    """Counting each word over the whole index, and the owner's rows, cost 20 ms a search."""
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite's bm25() counts inside FTS5")
    for n in range(3):
        await store.add(ALICE, f"The user visited Lisbon in year {n}", Category.CONTEXT)
    await ids(store, ALICE, "Lisbon")
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        assert len(await ids(store, ALICE, "Lisbon year")) == 3
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)
    searched = [s for s in statements if "agent_memory_search" in s or "count(" in s]
    assert len(searched) == 1, searched
