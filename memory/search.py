"""Rank memories against a few search words: word overlap, with the subject weighted most."""

import re
from collections.abc import Iterable

from memory.block import block_order
from memory.items import MemoryItem

WORD = re.compile(r"\w+")
SUBJECT_WEIGHT = 3.0
CONTENT_WEIGHT = 1.0
# A word that only starts a memory's word ("boss" in "bosses") counts for half.
PREFIX_FACTOR = 0.5
MIN_PREFIX_LENGTH = 3


def words(text: str) -> set[str]:
    """Return the case-folded words of text."""
    return {word.casefold() for word in WORD.findall(text)}


def _match(word: str, vocabulary: set[str]) -> float:
    """Score one search word against a memory's words: 1 exact, a half for a prefix."""
    if word in vocabulary:
        return 1.0
    if len(word) >= MIN_PREFIX_LENGTH and any(v.startswith(word) for v in vocabulary):
        return PREFIX_FACTOR
    return 0.0


def score(item: MemoryItem, query_words: set[str]) -> float:
    """Score a memory against the search words; 0 means no match."""
    subject = words(item.subject or "")
    content = words(item.content)
    return sum(
        SUBJECT_WEIGHT * _match(word, subject) + CONTENT_WEIGHT * _match(word, content)
        for word in query_words
    )


def search(items: Iterable[MemoryItem], query: str) -> list[MemoryItem]:
    """Return the memories that match any search word, best first, then in block order."""
    query_words = words(query)
    scored = [(score(item, query_words), item) for item in items]
    matches = [(s, item) for s, item in scored if s > 0]
    matches.sort(key=lambda pair: (-pair[0], block_order(pair[1])))
    return [item for _, item in matches]
