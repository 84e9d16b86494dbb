"""The key facts of a memory's text, checked by code: its numbers and significant words."""

import re

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
        if folded.isdigit() or folded in _FILLER or len(folded) < 3:
            continue
        facts[word] = None
    return list(facts)


def missing_facts(source: str, rewritten: str) -> list[str]:
    """Return the key facts of source that the rewritten text lost."""
    numbers = set(_NUMBER.findall(rewritten))
    stems = {_stem(word) for word in _WORD.findall(rewritten)}
    lost = []
    for fact in key_facts(source):
        kept = fact in numbers if _NUMBER.fullmatch(fact) else _stem(fact) in stems
        if not kept:
            lost.append(fact)
    return lost


def has_date(content: str) -> bool:
    """Tell whether a text holds a date or a time that can pass (a year, a month, 'next week')."""
    if re.search(r"\b(19|20)\d\d\b|\b\d{1,2}[./-]\d{1,2}\b", content):
        return True
    return any(word.casefold() in _DATED for word in _WORD.findall(content))
