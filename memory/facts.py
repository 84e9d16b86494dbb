"""The key facts of a memory's text, checked by code: its numbers and significant words, each
word with whether it is negated, and each number with the word it belongs to.

A rewrite that keeps every word can still flip the meaning: "never eats meat" -> "eats meat",
"allergic to peanuts, not to cashews" with the two swapped, "Bob is 34 and Carol is 29" with
the ages swapped. So a negation (not, never, no, n't, without, ...) negates the words after
it to the end of its clause, and a number belongs to the significant word before it in its
clause; both must survive the rewrite.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass

# Words that carry no fact of their own: function words, and the verbs a rewrite may change
# ("lives in Oslo" -> "moved from Oslo to Lisbon").
_FILLER = frozenset(
    """
    the a an and or but not nor of in on at to for from with by as is are was were be been being
    has have had does did do will would shall should can could may might must this that these
    those there their them they it its he she his her him we our you your user user's users
    who whom which what when where why how than then also very just now currently still
    about into over under after before again once some any each every all more most much
    like likes liked loves loved prefers preferred enjoys wants wanted needs lives lived
    living works worked working moved moving moves said says told tells thinks knows
    uses using used called named usually often always never really quite
    """.split()
)
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
# A word matches another that starts with the same letters: "colour" keeps "colours".
STEM = 5
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
_RELATIVE = (
    "today tomorrow tonight yesterday week weekend month year monday tuesday wednesday "
    "thursday friday saturday sunday until next upcoming soon"
).split()
_DATED = frozenset(_MONTHS + _RELATIVE)


# Words that negate what follows them in their clause (and any word ending in n't).
_NEGATIONS = frozenset(
    """
    not no never without nor neither none nothing nobody nowhere cannot
    nicht kein keine keinen keiner nie niemals ohne pas jamais sans nunca
    """.split()
)
# Where a clause ends: punctuation, and the words that join two statements. Not "or" and
# "nor": "doesn't eat meat or fish" negates both.
_CLAUSE_WORDS = frozenset(
    "and but while whereas although though however yet und aber et mais pero".split()
)
_TOKEN = re.compile(
    r"(?P<number>\d+(?:[.,:]\d+)*)|(?P<word>[^\W\d_]+(?:['\u2019][^\W\d_]+)*)|(?P<stop>[.,;!?()\n])"
)


@dataclass(frozen=True)
class _Token:
    """A significant word or a number of a text, where it stands in meaning."""

    text: str
    number: bool
    negated: bool
    # The significant word a number belongs to: the last one before it in its clause.
    owner: str | None = None


def _is_negation(folded: str) -> bool:
    """Tell whether a word negates what follows it."""
    return folded in _NEGATIONS or folded.endswith(("n't", "n\u2019t"))


def _significant(folded: str) -> bool:
    """Tell whether a word carries a fact of its own."""
    return not (folded in _FILLER or len(folded) < 3 or _is_negation(folded))


def _tokens(text: str) -> Iterator[_Token]:
    """Yield the significant words and numbers of a text, with negation and owner, in order."""
    negated, last_word = False, None
    for match in _TOKEN.finditer(text):
        folded = match.group().casefold()
        if match.lastgroup == "stop" or folded in _CLAUSE_WORDS:
            negated, last_word = False, None
        elif match.lastgroup == "number":
            yield _Token(match.group(), True, negated, last_word)
        elif _is_negation(folded):
            negated = True
        elif _significant(folded):
            yield _Token(match.group(), False, negated)
            # "12 March 2026" belongs to what comes before the date, not to the month.
            if folded not in _MONTHS:
                last_word = _stem(folded)


def _flipped(source: list[_Token], rewritten: list[_Token]) -> list[str]:
    """Return the words of source that the rewrite keeps only with the other polarity."""
    kept = {(_stem(t.text), t.negated) for t in rewritten if not t.number}
    present = {stem for stem, _ in kept}
    lost = []
    for token in source:
        stem = _stem(token.text)
        if token.number or stem not in present or (stem, token.negated) in kept:
            continue
        lost.append(f"not {token.text}" if token.negated else f"{token.text} (negated)")
    return lost


def _moved_numbers(source: list[_Token], rewritten: list[_Token]) -> list[str]:
    """Return the numbers of source that the rewrite gives to another word, and it another."""
    owners: dict[str, set[str]] = {}
    numbers: dict[str, set[str]] = {}
    for token in rewritten:
        if token.number and token.owner is not None:
            owners.setdefault(token.text, set()).add(token.owner)
            numbers.setdefault(token.owner, set()).add(token.text)
    lost = []
    for token in source:
        if not token.number or token.owner is None:
            continue
        elsewhere = token.owner not in owners.get(token.text, {token.owner})
        other = token.text not in numbers.get(token.owner, {token.text})
        if elsewhere and other:
            lost.append(f"{token.text} of {token.owner}")
    return lost


def _stem(word: str) -> str:
    """Return the start of a word that a rewrite must keep."""
    return word.casefold()[:STEM]


def key_facts(content: str) -> list[str]:
    """Return the numbers and significant words of a text, in order, once each."""
    facts: dict[str, None] = {}
    for number in _NUMBER.findall(content):
        facts[number] = None
    for word in _WORD.findall(content):
        folded = word.casefold()
        if folded.isdigit() or not _significant(folded):
            continue
        facts[word] = None
    return list(facts)


def missing_facts(source: str, rewritten: str) -> list[str]:
    """Return the key facts of source that the rewritten text lost, or kept in another sense."""
    numbers = set(_NUMBER.findall(rewritten))
    stems = {_stem(word) for word in _WORD.findall(rewritten)}
    lost = []
    for fact in key_facts(source):
        kept = fact in numbers if _NUMBER.fullmatch(fact) else _stem(fact) in stems
        if not kept:
            lost.append(fact)
    said, rewrite = list(_tokens(source)), list(_tokens(rewritten))
    for fact in _flipped(said, rewrite) + _moved_numbers(said, rewrite):
        if fact not in lost:
            lost.append(fact)
    return lost


def has_date(content: str) -> bool:
    """Tell whether a text holds a date or a time that can pass (a year, a month, 'next week')."""
    if re.search(r"\b(19|20)\d\d\b|\b\d{1,2}[./-]\d{1,2}\b", content):
        return True
    return any(word.casefold() in _DATED for word in _WORD.findall(content))
