"""Text as the full-text indexes see it, the same on SQLite and Postgres, in any script.

Both engines index words split on spaces, so the text is prepared here: case folded, accents
removed, and every Han, Hiragana and Katakana character a word of its own (those scripts
write no spaces; a word of them is searched as a phrase of its characters). Each indexed
row also carries its owner's token (a column on SQLite, weight D on Postgres), so a search
is one index lookup that never leaves its owner.
"""

import re
import unicodedata

# Scripts written without spaces: each character becomes a word of its own.
_UNSPACED = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
    "\U00020000-\U0002ffff"  # Han extensions
)
_UNSPACED_CHAR = re.compile(f"([{_UNSPACED}])")
_UNSPACED_RUN = re.compile(f"[{_UNSPACED}]+")
_WORD = re.compile(r"[^\W_]+")
# A search of more words than this is cut: the index answers fast, a long query could not.
MAX_QUERY_TERMS = 16
MAX_QUERY_CHARACTERS = 300
# Shorter words match only whole, or every word starting "a" would match.
MIN_PREFIX_LENGTH = 3


def fold(text: str) -> str:
    """Return text case folded and without accents."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return unicodedata.normalize("NFKC", bare).casefold()


def index_text(text: str) -> str:
    """Return text as it is indexed: folded words, unspaced scripts split into characters."""
    spaced = _UNSPACED_CHAR.sub(r" \1 ", fold(text))
    return " ".join(_WORD.findall(spaced))


def owner_token(owner_id: int) -> str:
    """Return the word that marks an owner's rows in an index (ids may be negative)."""
    return f"o{owner_id}".replace("-", "n")


def query_terms(query: str) -> list[tuple[str, ...]]:
    """Return the query's search terms: a word, or a phrase of unspaced-script characters."""
    terms: list[tuple[str, ...]] = []
    for word in _WORD.findall(fold(query[:MAX_QUERY_CHARACTERS])):
        runs = _UNSPACED_RUN.findall(word)
        if runs:
            terms += [tuple(run) for run in runs]
            rest = _UNSPACED_RUN.sub(" ", word).split()
            terms += [(part,) for part in rest]
        else:
            terms.append((word,))
    return list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]


def _prefixed(term: tuple[str, ...]) -> bool:
    """Tell whether a term matches words that start with it, not only itself."""
    return len(term) == 1 and len(term[0]) >= MIN_PREFIX_LENGTH


def fts5_query(owner_id: int, terms: list[tuple[str, ...]], owner_column: str = "owner") -> str:
    """Return an SQLite FTS5 query: the owner's rows matching any of the terms."""
    parts = []
    for term in terms:
        phrase = '"' + " ".join(term) + '"'
        parts.append(phrase + "*" if _prefixed(term) else phrase)
    return f'{owner_column} : "{owner_token(owner_id)}" AND ({" OR ".join(parts)})'


def tsquery_terms(terms: list[tuple[str, ...]]) -> str:
    """Return a Postgres to_tsquery text matching any of the terms (what ranking weighs)."""
    parts = []
    for term in terms:
        words = [f"'{word}'" for word in term]
        if _prefixed(term):
            words[0] += ":*"
        parts.append("(" + " <-> ".join(words) + ")")
    return " | ".join(parts)


def tsquery(owner_id: int, terms: list[tuple[str, ...]]) -> str:
    """Return a Postgres to_tsquery text: the owner's rows matching any of the terms."""
    return f"'{owner_token(owner_id)}':D & ({tsquery_terms(terms)})"


def excerpt(text: str, terms: list[tuple[str, ...]], width: int = 160) -> str:
    """Return the part of text around the first term found in it, on one line."""
    flat = " ".join(text.split())
    folded = fold(flat)
    starts = [folded.find("".join(t) if len(t) > 1 else t[0]) for t in terms]
    found = [s for s in starts if s >= 0 and len(folded) == len(flat)]
    start = max(0, min(found) - width // 3) if found else 0
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")
