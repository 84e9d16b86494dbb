"""Search an owner's past conversations: the turns whose words match, best matches first.

Ranked by the engine's own full-text ranking (FTS5's bm25() on SQLite; on Postgres ts_rank
per word weighted by its rarity, memory/search_rank.py), the newer turn first among equals;
the newest matches first when the model asks for them. With vectors on, the words' best are
fused with the turns nearest in meaning (bot/conversations/vectors.py).

SQLite's conversation_search is an FTS5 index over conversation_turns.search_text (triggers
keep it in step); Postgres keeps a generated tsvector with a GIN index (migration 0006).
Every indexed word carries its owner's mark, so a search reads only that owner's entries;
the turns' owner is also checked in the same SQL, before the limit, so no other owner's
turns can crowd an owner's out, and once more on the turns found.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import Row, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.content import turn_words
from bot.conversations.hit_context import with_context
from bot.conversations.models import Conversation, Turn
from bot.conversations.said_by import said_by_of, split_words, who_said
from memory.search_rank import CANDIDATES, candidates_way, counts, ranked_statement
from memory.search_terms import (
    Term,
    excerpt,
    excerpt_found,
    fts5_query,
    query_terms,
    search_terms,
    tsquery,
)

if TYPE_CHECKING:  # NumPy is loaded only when vectors are on (the embeddings extra)
    from bot.conversations.fusion import Array
    from bot.conversations.vectors import TurnVectors

# Best matches first, or the newest ("what did we last say about ...").
Order = Literal["relevance", "newest"]

# The turns of the conversation in progress the model still has are left out in SQL, before
# the limit: those after its fold (all of them before its first fold, as NULL compares
# false). Those folded into its summary are searched. ":skip" 0 is no conversation's id.
_NOT_IN_CONTEXT = (
    "AND (turns.conversation_id <> :skip OR turns.id <= (SELECT summary_through_turn_id "
    "FROM conversations WHERE conversations.id = :skip)) "
)
# The same on SQLite as a list of the conversation's turns its index finds: the ranked
# statement then checks each candidate's owner in the owner's index alone, never its row.
_SQLITE_NOT_IN_CONTEXT = (
    "AND turns.id NOT IN (SELECT id FROM conversation_turns WHERE conversation_id = :skip "
    "AND id > coalesce((SELECT summary_through_turn_id FROM conversations "
    "WHERE conversations.id = :skip), 0)) "
)
# Best first: FTS5's bm25() (lower is better), the newer turn first among equals. Only the
# newest CANDIDATES matches are ranked (FTS5 reads them newest first and stops there): a
# common word in tens of thousands of turns would otherwise cost a score for each. Their
# owner is looked up in the owner's index (id and owner only): reading 1,000 turns' rows
# for it cost 1 to 7 ms at 100,000.
_SQLITE_RANKED = (
    "SELECT turns.id FROM (SELECT rowid, bm25(conversation_search) AS score "
    "FROM conversation_search WHERE conversation_search MATCH :query "
    "ORDER BY rowid DESC LIMIT :candidates) AS found "
    "JOIN conversation_turns AS turns INDEXED BY ix_conversation_turns_owner "
    "ON turns.owner_id = :owner AND turns.id = found.rowid "
    f"{_SQLITE_NOT_IN_CONTEXT}ORDER BY found.score, turns.id DESC LIMIT :limit"
)
# CROSS JOIN keeps the index the outer loop: matches newest first, each turn by its key.
_SQLITE_NEWEST = (
    "SELECT turns.id FROM conversation_search CROSS JOIN conversation_turns AS turns "
    "ON turns.id = conversation_search.rowid "
    "WHERE conversation_search MATCH :query AND turns.owner_id = :owner "
    f"{_NOT_IN_CONTEXT}ORDER BY conversation_search.rowid DESC LIMIT :limit"
)
# The planner cannot know that other owners' turns may all be newer than this owner's, so
# with "owner_id = :owner ... ORDER BY id DESC" it walks the primary key backwards through
# them. A range on owner_id, ordered by (owner_id, id), can only be served newest first by
# the owner's index (common words), or else by the full-text index and a sort (rare ones).
_POSTGRES_NEWEST = (
    "SELECT id FROM conversation_turns AS turns WHERE owner_id BETWEEN :owner AND :owner "
    f"AND search_document @@ to_tsquery('simple', :query) {_NOT_IN_CONTEXT}"
    "ORDER BY owner_id DESC, id DESC LIMIT :limit"
)


@dataclass(frozen=True)
class TurnHit:
    """A turn that matched: who said it, when, and the words around the match."""

    turn_id: int
    role: str
    said_at: datetime
    excerpt: str
    # Whose words they are, as a result line says it: "the user said", "Bob" said...
    who: str = "the user said"
    # Around the match in the message the turn quotes, when only that part matched.
    quote_excerpt: str | None = None
    # A short hit's neighbour in its conversation: where ("just before it"), whose words
    # ("the user said") and a few of them (bot/conversations/hit_context.py).
    context: tuple[str, str, str] | None = None


# A hit shows its whole turn up to this many characters (around the match when longer)...
TURN_CHARACTERS = 700
# ...while the hits together stay within this many (about 2,000 tokens); past it, a hit
# shows at least the words around its match.
RESULT_CHARACTERS = 7000
EXCERPT_CHARACTERS = 160
# With vectors on, the words' best this many are fused with the nearest in meaning.
FUSED_POOL = 50


def _hit(row: Row[*tuple[Any, ...]], terms: list[tuple[str, ...]], width: int) -> TurnHit:
    """Build a hit from a turn's row: whose words, and its words (around the match if long)."""
    said_by = said_by_of(row.said_by, row.content)
    words = turn_words(row.role, row.content)
    files = [f"[{b['kind']}: {b.get('name', '')}]" for b in row.content if b["type"] == "file"]
    words = " ".join([words, *files]) if files else words
    own, quote = split_words(words, said_by) if row.role == "user" else (words, "")
    in_own, in_quote = (excerpt(part, terms, width) for part in (own, quote))
    quote_matched = bool(quote) and excerpt_found(quote, terms) and not excerpt_found(own, terms)
    return TurnHit(
        turn_id=row.id,
        role=row.role,
        said_at=row.created_at,
        excerpt=in_own,
        who=who_said(row.role, said_by),
        quote_excerpt=in_quote if quote_matched else None,
    )


async def _matching_ids(
    session: AsyncSession, owner_id: int, query: str, limit: int, skip: int | None, order: Order
) -> list[int]:
    """Return the ids of the owner's matching turns in order, not those skip holds."""
    terms = search_terms(query)
    if not terms:
        return []
    parameters: dict[str, object] = {"limit": limit, "owner": owner_id, "skip": skip or 0}
    sqlite = (await session.connection()).dialect.name == "sqlite"
    if sqlite:
        statement = _SQLITE_RANKED if order == "relevance" else _SQLITE_NEWEST
        parameters["query"] = fts5_query(owner_id, terms)
        parameters["candidates"] = CANDIDATES
    elif order == "newest":
        statement, parameters["query"] = _POSTGRES_NEWEST, tsquery(owner_id, terms)
    else:
        # A sequential scan for a word's first 1,000 matches starts wherever another scan of
        # the table is (synchronised scans), and may read most of the table before them.
        await session.execute(text("SET LOCAL enable_seqscan = off"))
        sampled: dict[Term, int] = {}
        found = await counts(session, owner_id, terms, sampled=sampled)
        if not any(found[1:]):
            return []
        way = await candidates_way(session, owner_id, terms, found, sampled)
        statement, ranked = ranked_statement(owner_id, terms, found, _NOT_IN_CONTEXT, way)
        parameters.update(ranked)
    return [turn_id for (turn_id,) in await session.execute(text(statement), parameters)]


class ConversationSearch:
    """Finds what was said in an owner's conversations, also long ago."""

    def __init__(
        self, sessionmaker: async_sessionmaker[AsyncSession], vectors: "TurnVectors | None" = None
    ):
        self._sessionmaker = sessionmaker
        # Best matches by words and meaning fused (bot/conversations/vectors.py), when on.
        self._vectors = vectors

    async def _ranked(
        self,
        session: AsyncSession,
        owner_id: int,
        query: str,
        limit: int,
        skip: int | None,
        order: Order,
        question: "Array | None",
    ) -> list[int]:
        """Return the ids found by words, fused with those nearest the question when given."""
        if self._vectors is None or question is None:
            return await _matching_ids(session, owner_id, query, limit, skip, order)
        pool = max(limit, FUSED_POOL)
        words = await _matching_ids(session, owner_id, query, pool, skip, order)
        return await self._vectors.fused(session, owner_id, question, words, limit, skip or 0)

    async def search(
        self,
        owner_id: int,
        query: str,
        limit: int,
        *,
        skip_conversation: int | None = None,
        order: Order = "relevance",
    ) -> list[TurnHit]:
        """Return the owner's turns matching the words, best (or newest) first, each with its words.

        The conversation in progress can be left out, but for the turns folded into its
        summary: the others are in the model's context.
        """
        terms = query_terms(query)
        question = None
        if self._vectors is not None and order == "relevance":
            # The model's time (tens of ms on a CPU) is spent before a connection is taken.
            question = await self._vectors.question(query)
        async with self._sessionmaker() as session:
            skip = skip_conversation
            ids = await self._ranked(session, owner_id, query, limit, skip, order, question)
            rows = await session.execute(
                select(Turn.id, Turn.role, Turn.content, Turn.created_at, Turn.said_by)
                .join(Conversation, Conversation.id == Turn.conversation_id)
                .where(Turn.id.in_(ids), Conversation.owner_id == owner_id)
            )
            by_id = {row.id: row for row in rows}
            hits, left = [], RESULT_CHARACTERS
            for turn_id in ids:
                if turn_id in by_id:
                    width = max(EXCERPT_CHARACTERS, min(TURN_CHARACTERS, left))
                    hits.append(_hit(by_id[turn_id], terms, width))
                    left -= len(hits[-1].excerpt)
            return await with_context(session, owner_id, hits, left)
