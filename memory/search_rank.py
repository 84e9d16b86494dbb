"""Postgres's ranking of an owner's turns and memories: ts_rank per word, weighted by rarity.

ts_rank alone knows no rarity: "Lisbon" in one turn of thousands would count no more than a
word in half of them. So each word's matches are counted first (up to a bound, the GIN
index answers), and its ts_rank weighted by the BM25 IDF of that count, as FTS5's bm25()
does on SQLite. Candidates are the turns holding the rarest words, added while they stay
few: a common word adds to the score of the turns found, never thousands of turns to rank.
They are found through the word index, or by reading the owner's turns newest first when
their words are common enough for that to read fewer (candidates_way); else, for a common
word, through the word index combined with the owner's newest turns that should hold them.
Memories are ranked in one statement instead (ranked_among): each word is counted among the
candidates, not the whole index (12 ms a word at 100,000). The owner's size, the IDF's N, is
counted at most every OWNER_SIZE_SECONDS (a 20,000-row read, 10 to 20 ms), for both.
"""

import math
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

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
# The owner's newest turns read to tell how common the candidates' words are among them.
SAMPLE = 1000
# How many turns the walk may read for each one the word index's way would read.
WALK_ADVANTAGE = 2
# The owner's newest turns searched for a common word's candidates, as a multiple of those
# that should hold CANDIDATES matches at the word's share among the newest SAMPLE.
REACH_MARGIN = 1.25
# Past this many of the owner's newest turns, their bitmap costs more than the matches' pages.
REACH_BOUND = 50000
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
    owned: tuple[str, str] = ("conversation_turns", ""),
    searched: tuple[str, str] = ("conversation_turns", "search_document"),
    sampled: dict[Term, int] | None = None,
) -> list[int]:
    """Return the owner's row count (bounded, kept a while) and each term's match count (bounded).

    owned: the table of the owner's rows and the condition picking them beyond the owner;
    searched: the table and column of the index (each word there is marked as its owner's).
    A word's count is its first COUNT_BOUND matches, which the word index finds only after
    listing all of them (50,000 for a common prefix: tens of ms). So for an owner of more
    than SAMPLE turns, the words are first counted among the owner's newest SAMPLE turns
    (one read of the owner's index), and a word that many would put past the bound there
    is taken as common, uncounted; sampled, if given, gets each term's hits there.
    """
    total = await owner_size(session, owner_id, owned)
    found = [0] * len(terms)
    to_count = list(range(len(terms)))
    if total > SAMPLE and searched[0] == "conversation_turns":
        hits_of = await _sampled(session, owner_id, terms)
        if sampled is not None:
            sampled.update(zip(terms, hits_of, strict=True))
        common = COUNT_BOUND * SAMPLE / total  # sample hits that put a word past the bound
        for index, hits in enumerate(hits_of):
            if hits >= common:
                found[index] = COUNT_BOUND
        to_count = [index for index in to_count if not found[index]]
    if to_count:
        parts, parameters = [], {}
        for index in to_count:
            parameters[f"t{index}"] = tsquery_term(owner_id, terms[index])
            condition = f"{searched[1]} @@ to_tsquery('simple', :t{index}) LIMIT {COUNT_BOUND}"
            parts.append(_count(f"c{index}", searched[0], condition))
        row = (await session.execute(text("SELECT " + ", ".join(parts)), parameters)).one()
        for index, count in zip(to_count, row, strict=True):
            found[index] = int(count)
    return [total, *found]


async def _sampled(session: AsyncSession, owner_id: int, terms: Sequence[Term]) -> list[int]:
    """Return how many of the owner's newest SAMPLE turns each term matches."""
    parameters: dict[str, object] = {"owner": owner_id, "sample": SAMPLE}
    counted = []
    for index, term in enumerate(terms):
        parameters[f"s{index}"] = tsquery_term(owner_id, term)
        counted.append(
            f"count(*) FILTER (WHERE search_document @@ to_tsquery('simple', :s{index}))"
        )
    sampled = (
        f"SELECT {', '.join(counted)} FROM (SELECT search_document FROM conversation_turns "
        "WHERE owner_id BETWEEN :owner AND :owner "
        "ORDER BY owner_id DESC, id DESC LIMIT :sample) AS newest"
    )
    return [int(hits) for hits in (await session.execute(text(sampled), parameters)).one()]


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


def chosen_terms(terms: Sequence[Term], found: Sequence[int]) -> list[Term]:
    """Return the terms whose matches are the candidates: the rarest, while they stay few."""
    matches = found[1:]
    chosen: list[Term] = []
    covered = 0
    for index in sorted(range(len(terms)), key=lambda index: matches[index]):
        if matches[index] == 0:
            continue
        if chosen and covered + matches[index] > CANDIDATES:
            break
        chosen.append(terms[index])
        covered += matches[index]
    return chosen or list(terms)


@dataclass(frozen=True)
class Way:
    """How the candidates are found: the owner's turns newest first, or through the words."""

    walk: bool = False
    # Through the words, only among the owner's newest this many turns (None: all of them).
    reach: int | None = None


async def candidates_way(
    session: AsyncSession,
    owner_id: int,
    terms: Sequence[Term],
    found: Sequence[int],
    sampled: dict[Term, int] | None = None,
) -> Way:
    """Tell how to find the candidates reading the fewest turns.

    Through the word index alone, every match is read to keep the newest CANDIDATES;
    newest first, turns are read until CANDIDATES match. Only a word in at least
    COUNT_BOUND turns can make either costly, so only then is its share among the newest
    SAMPLE turns read: if walking is not the cheaper, the word index is combined with the
    owner's newest turns that should hold CANDIDATES matches (reach), a bitmap of index
    entries, so only about CANDIDATES turns are read, not every match. sampled: the
    terms' hits among the newest SAMPLE turns, if counts has read them.
    """
    chosen = chosen_terms(terms, found)
    if max(found[1 + list(terms).index(term)] for term in chosen) < COUNT_BOUND:
        return Way()
    if sampled and len(chosen) == 1 and chosen[0] in sampled:
        # (A word in COUNT_BOUND turns or more is the only one chosen.)
        hits = sampled[chosen[0]]
    else:
        hits = await _newest_hits(session, owner_id, chosen)
    # Walked turns sit together, in the order they were written; found ones each on a page.
    # The owner's size is bounded, so an owner past it may be found the index's way when
    # walking would have read fewer pages.
    walked = CANDIDATES * SAMPLE / max(hits, 1)
    if walked <= WALK_ADVANTAGE * max(COUNT_BOUND, hits * found[0] / SAMPLE):
        return Way(walk=True)
    reach = math.ceil(walked * REACH_MARGIN)
    # Not when its matches are older than the sample (how far back is not known), nor when
    # the owner's index would be read whole: a bitmap of all the owner's turns costs more
    # than it saves (the owner's size is known when under OWNER_BOUND).
    whole = found[0] < OWNER_BOUND and reach >= found[0]
    if not hits or whole or reach > REACH_BOUND:
        return Way()
    return Way(reach=reach)


async def _newest_hits(session: AsyncSession, owner_id: int, chosen: Sequence[Term]) -> int:
    """Return how many of the owner's newest SAMPLE turns match any of the chosen terms."""
    statement = (
        "SELECT count(*) FILTER (WHERE search_document @@ to_tsquery('simple', :query)) "
        "FROM (SELECT search_document FROM conversation_turns WHERE owner_id BETWEEN :owner "
        "AND :owner ORDER BY owner_id DESC, id DESC LIMIT :sample) AS newest"
    )
    parameters = {"query": tsquery(owner_id, list(chosen)), "owner": owner_id, "sample": SAMPLE}
    return int((await session.execute(text(statement), parameters)).scalar_one())


def ranked_statement(
    owner_id: int,
    terms: Sequence[Term],
    found: Sequence[int],
    not_in_context: str,
    way: Way = Way(),
) -> tuple[str, dict[str, object]]:
    """Return SQL and parameters ranking the owner's matching turns, best first.

    The candidates are the newest CANDIDATES matches of the chosen terms, so a word in
    thousands of the owner's turns never costs a rank for each.
    """
    # Normalisation 1: divided by 1 + log(length), as BM25 favours the shorter turn.
    score, parameters = weighted_rank(owner_id, terms, found, "ts_rank(search_document, {q}, 1)")
    parameters["candidates"] = tsquery(owner_id, chosen_terms(terms, found))
    parameters["bound"] = CANDIDATES
    where, order = _candidates_where(way, "search_document @@ to_tsquery('simple', :candidates)")
    if way.reach is not None:
        parameters["reach"] = way.reach
    statement = (
        "SELECT id FROM (SELECT id, search_document FROM conversation_turns AS turns "
        f"WHERE {where} {not_in_context}ORDER BY {order} LIMIT :bound) AS ranked "
        f"ORDER BY {score} DESC, id DESC LIMIT :limit"
    )
    return statement, parameters


def _candidates_where(way: Way, matching: str) -> tuple[str, str]:
    """Return the condition and order finding the candidates the way given.

    A walk reads them newest first through the owner's index, else the word index finds the
    matches (among the reach of the owner's newest turns, if any) and they are sorted.
    """
    # The words are their owner's, so the owner's index narrows nothing the word index found;
    # the planner, not knowing it, would combine the two (a bitmap of all the owner's turns).
    # Each form keeps the other index out: "+ 0" and "IS TRUE" are not indexable.
    if way.walk:
        walk = f"owner_id BETWEEN :owner AND :owner AND ({matching}) IS TRUE"
        return walk, "owner_id DESC, id DESC"
    if way.reach is None:
        return f"owner_id + 0 = :owner AND {matching}", "id + 0 DESC"
    # Both indexes, on purpose: the owner's newest reach turns are a bitmap of index entries,
    # and only the turns in both are read. The floor is found by an index-only read of reach
    # entries; a row comparison, so the primary key (every owner's turns past the floor) is
    # no candidate.
    floor = (
        "coalesce((SELECT id FROM conversation_turns WHERE owner_id BETWEEN :owner AND "
        ":owner ORDER BY owner_id DESC, id DESC OFFSET :reach LIMIT 1), 0)"
    )
    newest = f"(owner_id, id) >= (:owner, {floor}) AND owner_id <= :owner"
    return f"{newest} AND {matching}", "id + 0 DESC"


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
