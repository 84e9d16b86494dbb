"""Text as the full-text indexes see it, the same on SQLite and Postgres, in any script.

Words are split here, not by the engines: case folded, accents removed, and every Han,
Hiragana and Katakana character a word of its own (those scripts write no spaces; a word of
them is searched as a phrase of its characters). Each word is then spelled in ASCII letters
and digits only, which every engine, Unicode version and locale keeps in one word, so the
engines split the index text exactly at its spaces. (Left to split Unicode themselves, they
disagree with Python and each other: FTS5 breaks words at U+19B0, Postgres at U+09F4.)
Words are stemmed here too (Snowball: English for Latin script, Russian for Cyrillic; other
scripts as they are), before they are spelled: the engines' own stemmers would see only
spelled, marked words, and this way both engines hold and search the same stems.
Every indexed word starts with its owner's mark ("o111z" before "boss"), so a search reads
only its owner's entries of the index, however much other owners (or the owner's other
words) hold; the owner is also checked in the same SQL, so isolation never rests on it.
"""

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from memory.stopwords import STOPWORDS

# Scripts written without spaces: each character becomes a word of its own.
_UNSPACED = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
    "\U00020000-\U0002ffff"  # Han extensions
)
_UNSPACED_CHAR = re.compile(f"([{_UNSPACED}])")
_UNSPACED_RUN = re.compile(f"[{_UNSPACED}]+")
_WORD = re.compile(r"[^\W_]+")
# Spelling: a-y and digits stand for themselves; any other character (z included) is "z" and
# its code point in four base-36 digits. No spelling is the start of another, so a prefix of
# a word is spelled as a prefix of its spelling, and prefix searches work as on the words.
_SPELLED_AS_ITSELF = re.compile("[^a-y0-9]")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
# Longer words are indexed (and searched) by their start: Postgres drops lexemes over 2 KB.
MAX_WORD_CHARACTERS = 100
# A search of more words than this is cut: the index answers fast, a long query could not.
MAX_QUERY_TERMS = 16
MAX_QUERY_CHARACTERS = 300
# A query word's stem this long also matches the words that start with it (compounds,
# languages the stemmer does not know); shorter ones would match a crowd of unrelated words
# ("art" in "article", "artist").
MIN_PREFIX_LENGTH = 5
_LATIN = re.compile("[a-z]+")
_CYRILLIC = re.compile("[\u0430-\u044f\u0451]+")
_ENGLISH = snowballstemmer.stemmer("english")
_RUSSIAN = snowballstemmer.stemmer("russian")


def fold(text: str) -> str:
    """Return text case folded and without accents."""
    decomposed = unicodedata.normalize("NFKD", text)
    if decomposed.isascii():  # most messages: no combining marks to drop, char by char
        return decomposed.casefold()
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return unicodedata.normalize("NFKC", bare).casefold()


def owner_mark(owner_id: int) -> str:
    """Return what starts every indexed word of an owner: "o", the id ("n" for minus), "z"."""
    # Ids are digits only, so the first "z" ends the mark: no two owners' words can meet.
    return f"o{owner_id}z".replace("-", "n")


def _code(match: re.Match[str]) -> str:
    """Return one character spelled as "z" and its code point in four base-36 digits."""
    number, digits = ord(match.group()), ""
    for _ in range(4):
        number, digit = divmod(number, 36)
        digits = _BASE36[digit] + digits
    return "z" + digits


def spelled(word: str) -> str:
    """Return a folded word (its start, if very long) in ASCII letters and digits only."""
    return _SPELLED_AS_ITSELF.sub(_code, word[:MAX_WORD_CHARACTERS])


def words(text: str) -> list[str]:
    """Return the folded words of text, unspaced scripts split into characters."""
    return _WORD.findall(_UNSPACED_CHAR.sub(r" \1 ", fold(text)))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Return a folded word's stem: English rules for Latin letters, Russian for Cyrillic."""
    if _LATIN.fullmatch(word):
        return str(_ENGLISH.stemWord(word))
    if _CYRILLIC.fullmatch(word):
        return str(_RUSSIAN.stemWord(word))
    return word


def index_text(text: str, owner_id: int) -> str:
    """Return text as the index holds it for an owner: each word stemmed, spelled, theirs."""
    mark = owner_mark(owner_id)
    return " ".join(mark + spelled(stem(word)) for word in words(text))


@dataclass(frozen=True)
class Term:
    """A search term: a stemmed word, or a phrase of characters; a prefix or only whole."""

    words: tuple[str, ...]
    prefix: bool = False


def query_terms(query: str) -> list[tuple[str, ...]]:
    """Return the query's words as written (folded), stopwords out unless they are all it has.

    A word, or a phrase of unspaced-script characters; excerpts look for these.
    """
    terms: list[tuple[str, ...]] = []
    for word in _WORD.findall(fold(query[:MAX_QUERY_CHARACTERS])):
        runs = _UNSPACED_RUN.findall(word)
        if runs:
            terms += [tuple(run) for run in runs]
            terms += [(part,) for part in _UNSPACED_RUN.sub(" ", word).split()]
        else:
            terms.append((word,))
    unique = list(dict.fromkeys(terms))
    kept = [t for t in unique if len(t) > 1 or t[0] not in STOPWORDS] or unique
    return kept[:MAX_QUERY_TERMS]


def search_terms(query: str) -> list[Term]:
    """Return the query's search terms: stemmed words, phrases of unspaced characters."""
    terms = []
    for term in query_terms(query):
        if len(term) > 1:
            terms.append(Term(term))
            continue
        stemmed = stem(term[0])
        terms.append(Term((stemmed,), len(stemmed) >= MIN_PREFIX_LENGTH))
    return list(dict.fromkeys(terms))


def fts5_query(owner_id: int, terms: list[Term]) -> str:
    """Return an SQLite FTS5 query: the owner's rows matching any of the terms."""
    mark = owner_mark(owner_id)
    parts = []
    for term in terms:
        phrase = '"' + " ".join(mark + spelled(word) for word in term.words) + '"'
        parts.append(phrase + "*" if term.prefix else phrase)
    return " OR ".join(parts)


def tsquery_term(owner_id: int, term: Term) -> str:
    """Return one term as a Postgres to_tsquery text, for the owner's rows."""
    mark = owner_mark(owner_id)
    lexemes = [f"'{mark}{spelled(word)}'" for word in term.words]
    if term.prefix:
        lexemes[0] += ":*"
    return "(" + " <-> ".join(lexemes) + ")"


def tsquery(owner_id: int, terms: list[Term]) -> str:
    """Return a Postgres to_tsquery text: the owner's rows matching any of the terms."""
    return " | ".join(tsquery_term(owner_id, term) for term in terms)


def _starts(flat: str, terms: list[tuple[str, ...]]) -> list[int]:
    """Return where the terms occur in text on one line, folded (none if folding moves it)."""
    folded = fold(flat)
    starts = [folded.find("".join(t) if len(t) > 1 else t[0]) for t in terms]
    return [s for s in starts if s >= 0 and len(folded) == len(flat)]


def excerpt_found(text: str, terms: list[tuple[str, ...]]) -> bool:
    """Tell whether any term occurs in the text as excerpt would find it."""
    return bool(_starts(" ".join(text.split()), terms))


def excerpt(text: str, terms: list[tuple[str, ...]], width: int = 160) -> str:
    """Return text on one line: whole if it fits in width, else the part around the first term."""
    flat = " ".join(text.split())
    found = _starts(flat, terms) if len(flat) > width else []
    start = max(0, min(found) - width // 3) if found else 0
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")
