"""A short hit's context: the message just before it in its conversation, a few words of it.

"Yes, twice!" is found by its words or meaning, but says nothing without the question it
answers; so a hit shorter than SHORT_HIT characters shows the turn before it (with words,
in its conversation; the one after for a conversation's first), cut to CONTEXT_CHARACTERS,
as long as the whole result stays within its bound: one query for all of them.
"""

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sqlalchemy import Row, text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.conversations.content import turn_words
from bot.conversations.said_by import said_by_of, who_said

if TYPE_CHECKING:
    from bot.conversations.search import TurnHit

# A hit shorter than this many characters shows its neighbour.
SHORT_HIT = 100
# A neighbour shows at most this many characters.
CONTEXT_CHARACTERS = 240

# For each short hit, its conversation's nearest turn with words before it, else after it.
_NEIGHBOURS = (
    "SELECT hit.id AS hit_id, near.id < hit.id AS before, near.role, near.content, near.said_by "
    "FROM conversation_turns AS hit JOIN conversation_turns AS near "
    "ON near.id = COALESCE("
    "(SELECT max(b.id) FROM conversation_turns AS b WHERE b.conversation_id = "
    "hit.conversation_id AND b.id < hit.id AND b.search_text IS NOT NULL), "
    "(SELECT min(a.id) FROM conversation_turns AS a WHERE a.conversation_id = "
    "hit.conversation_id AND a.id > hit.id AND a.search_text IS NOT NULL)) "
    "WHERE hit.id IN ({ids}) AND hit.owner_id = :owner"
)


async def with_context(
    session: AsyncSession, owner_id: int, hits: list["TurnHit"], left: int
) -> list["TurnHit"]:
    """Return the hits, the short ones with their neighbour while left characters allow."""
    short = [hit.turn_id for hit in hits if len(hit.excerpt) < SHORT_HIT]
    if not short or left < CONTEXT_CHARACTERS:
        return hits
    ids = ", ".join(str(int(turn_id)) for turn_id in short)
    rows = await session.execute(text(_NEIGHBOURS.format(ids=ids)), {"owner": owner_id})
    near = {row.hit_id: _line(row) for row in rows}
    found = []
    for hit in hits:
        line = near.get(hit.turn_id)
        if line is not None and len(line[2]) <= left:
            hit, left = replace(hit, context=line), left - len(line[2])
        found.append(hit)
    return found


def _line(row: Row[*tuple[Any, ...]]) -> tuple[str, str, str] | None:
    """Return a neighbour as where it is, who said it and its words (cut), or None if none."""
    content, said_by = _json(row.content), _json(row.said_by)
    words = " ".join(turn_words(row.role, content).split())
    if not words:
        return None
    if len(words) > CONTEXT_CHARACTERS:
        words = words[: CONTEXT_CHARACTERS - 1] + "…"
    stored = said_by if isinstance(said_by, dict) else None
    where = "just before it" if row.before else "just after it"
    return where, who_said(row.role, said_by_of(stored, list(content))), words


def _json(value: Any) -> Any:
    """Return a JSON column's value as Python (a text statement hands SQLite's over as text)."""
    return json.loads(value) if isinstance(value, str) else value
