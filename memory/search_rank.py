"""Postgres's ranking of an owner's turns and memories: ts_rank per word, weighted by rarity.

ts_rank alone knows no rarity: "Lisbon" in one turn of thousands would count no more than a
word in half of them. So each word's matches are counted first (up to a bound, the GIN
index answers), and its ts_rank weighted by the BM25 IDF of that count, as FTS5's bm25()
does on SQLite. Candidates are the turns holding the rarest words, added while they stay
few: a common word adds to the score of the turns found, never thousands of turns to rank.
Memories are ranked in one statement instead (ranked_among): each word is counted among the
candidates, not the whole index (12 ms a word at 100,000), and the owner's size, the IDF's
N, is counted at most every OWNER_SIZE_SECONDS (a 20,000-row read, 10 to 20 ms).
"""

import math
import time
import weakref
from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncSession

from memory.search_terms import Term, tsquery, tsquery_term

# Matches counted per word: past it a word is common, whatever its count.
COUNT_BOUND = 1000
# The owner's turns counted for the IDF's N: past it, every owner looks this large.
OWNER_BOUND = 20000
# Turns ranked at most: the newest matches of the rarest words, until they pass this many.
CANDIDATES = 1000
# How long an owner's count is used before it is counted again: it is only the IDF's N.
OWNER_SIZE_SECONDS = 300.0
# Per database, per table and owner: the bounded count and when it was taken.
_SIZES: "weakref.WeakKeyDictionary[Engine, dict[tuple[str, int], tuple[int, float]]]"
_SIZES = weakref.WeakKeyDictionary()


def _count(alias: str, table: str, condition: str) -> str:
    """Return SQL counting a table's rows meeting a condition, up to a bound."""
    return f"(SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {condition}) {alias})"


async def counts(
    session: AsyncSession,
    owner_id: int,
    terms: Sequence[Term],
    owned: tuple[str, str] = ("conversation_turns", "owner_id = :owner"),
    searched: tuple[str, str] = ("conversation_turns", "search_document"),
) -> list[int]:
    """Return the owner's row count (bounded) and each term's match count (bounded).

    owned: the table of the owner's rows and the condition picking them; searched: the
    table and column of the index (each word there is marked as its owner's).
    """
    parts = [_count("n", owned[0], f"{owned[1]} LIMIT {OWNER_BOUND}")]
    parameters: dict[str, object] = {"owner": owner_id}
    for index, term in enumerate(terms):
        parameters[f"t{index}"] = tsquery_term(owner_id, term)
        condition = f"{searched[1]} @@ to_tsquery('simple', :t{index}) LIMIT {COUNT_BOUND}"
        parts.append(_count(f"c{index}", searched[0], condition))
    row = (await session.execute(text("SELECT " + ", ".join(parts)), parameters)).one()
    return list(row)


async def owner_size(
    session: AsyncSession, owner_id: int, owned: tuple[str, str] = ("conversation_turns", "")
) -> int:
    """Return how many rows the owner has (bounded), counted at most every few minutes.

    owned: the table of the owner's rows and the condition picking them beyond the owner.
    """
    engine = (await session.connection()).sync_engine
    sizes = _SIZES.setdefault(engine, {})
    key, now = (owned[0] + owned[1], owner_id), time.monotonic()
    if key in sizes and now - sizes[key][1] < OWNER_SIZE_SECONDS:
        return sizes[key][0]
    statement = (
        f"SELECT count(*) FROM (SELECT 1 FROM {owned[0]} WHERE owner_id = :owner "
        f"{owned[1]} LIMIT {OWNER_BOUND}) AS owned"
    )
    size = int((await session.execute(text(statement), {"owner": owner_id})).scalar_one())
    sizes[key] = (size, now)
    return size


def idf(total: int, matches: int) -> float:
    """Return BM25's inverse document frequency of a word in matches of total turns."""
    total = max(total, matches)
    return math.log(1 + (total - matches + 0.5) / (matches + 0.5))


def weighted_rank(
    owner_id: int, terms: Sequence[Term], found: Sequence[int], rank: str
) -> tuple[str, dict[str, object]]:
    """Return an SQL sum of each found term's rank (rank's "{q}" is its tsquery) times its IDF."""
    total, matches = found[0], found[1:]
    parameters: dict[str, object] = {}
    scores = []
    for index, term in enumerate(terms):
        if matches[index]:
            parameters[f"q{index}"] = tsquery_term(owner_id, term)
            query = f"to_tsquery('simple', :q{index})"
            scores.append(f"{idf(total, matches[index]):.6f} * " + rank.format(q=query))
    return " + ".join(scores) or "0", parameters


def ranked_statement(
    owner_id: int, terms: Sequence[Term], found: Sequence[int], not_in_context: str
) -> tuple[str, dict[str, object]]:
    """Return SQL and parameters ranking the owner's matching turns, best first."""
    matches = found[1:]
    order = sorted(range(len(terms)), key=lambda index: matches[index])
    chosen: list[Term] = []
    covered = 0
    for index in order:
        if matches[index] == 0:
            continue
        if chosen and covered + matches[index] > CANDIDATES:
            break
        chosen.append(terms[index])
        covered += matches[index]
    # Normalisation 1: divided by 1 + log(length), as BM25 favours the shorter turn.
    score, parameters = weighted_rank(owner_id, terms, found, "ts_rank(search_document, {q}, 1)")
    parameters["candidates"] = tsquery(owner_id, chosen or list(terms))
    # The candidates are read newest first through the owner's index and cut, so a word in
    # thousands of the owner's turns never costs a rank for each.
    statement = (
        "SELECT id FROM conversation_turns AS ranked WHERE id IN (SELECT id "
        "FROM conversation_turns AS turns WHERE owner_id BETWEEN :owner AND :owner "
        f"AND search_document @@ to_tsquery('simple', :candidates) {not_in_context}"
        "ORDER BY owner_id DESC, id DESC LIMIT :bound) "
        f"ORDER BY {score} DESC, id DESC LIMIT :limit"
    )
    parameters["bound"] = CANDIDATES
    return statement, parameters


def ranked_among(
    owner_id: int, terms: Sequence[Term], total: int, column: str, rank: str
) -> tuple[str, str, dict[str, object]]:
    """Return SQL counting each term among the candidates, and SQL of their weighted ranks.

    The counts' SQL reads the candidates ("found", with column); the score's reads "counted"
    (c0, c1...: each term's matches among them) and rank's "{q}" is the term's tsquery.
    """
    parameters: dict[str, object] = {"total": total}
    counted, scores = [], []
    for index, term in enumerate(terms):
        parameters[f"q{index}"] = tsquery_term(owner_id, term)
        query = f"to_tsquery('simple', :q{index})"
        counted.append(f"count(*) FILTER (WHERE {column} @@ {query}) AS c{index}")
        # BM25's IDF (idf above), with the matches among the candidates.
        weight = f"ln(1 + (greatest(:total, c{index}) - c{index} + 0.5) / (c{index} + 0.5))"
        scores.append(f"{weight} * " + rank.format(q=query))
    return "SELECT " + ", ".join(counted) + " FROM found", " + ".join(scores), parameters
