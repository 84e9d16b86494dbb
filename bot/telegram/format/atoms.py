"""HTML and plain text as atoms: tags, entities, grapheme clusters, and runs of text.

A run stands for as many atoms as it has characters, each a cluster of its own and one
UTF-16 unit long (ASCII, most letters of most scripts), so splitting can measure and search
it with string methods instead of one object per character.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from bot.telegram.format.text import utf16_len

# Atom kinds.
TEXT, RUN, OPEN, CLOSE = 0, 1, 2, 3

_MAX_CLUSTER_UNITS = 16
# A tag with a name, then an entity, then anything else (text, or a '<' or '&' that is).
_HTML_TOKEN = re.compile(
    r"(<(/?)([a-zA-Z][a-zA-Z0-9-]*)[^<>]*>)"
    r"|(&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{1,8});)"
    r"|(<[^<>]*>|[^<&]+|[<&])"
)
_JOINER = "\u200d"
_NOTHING = re.compile(r"[^\s\S]")
_new = tuple.__new__


class Atom(NamedTuple):
    """An indivisible piece of HTML source (or a run of characters, each one)."""

    kind: int
    src: str
    name: str
    cost: int


def html_atoms(html_text: str) -> list[Atom]:
    """Tokenize HTML into tags, entities, grapheme clusters and runs."""
    if "<" not in html_text and "&" not in html_text:
        return text_atoms(html_text)  # plain text: no pattern need look at every character
    atoms: list[Atom] = []
    add = atoms.append
    specials = _specials(html_text)
    for tag, slash, name, entity, text in _HTML_TOKEN.findall(html_text):
        # tuple.__new__ skips the NamedTuple constructor's Python frame: this loop is hot.
        if tag:
            kind = CLOSE if slash else OPEN
            add(_new(Atom, (kind, tag, name.lower(), utf16_len(tag))))
        elif entity:
            add(_new(Atom, (TEXT, entity, "", len(entity))))
        elif text.isascii():
            add(_new(Atom, (RUN, text, "", len(text))))
        else:
            atoms.extend(text_atoms(text, specials))
    return atoms


def text_atoms(text: str, specials: re.Pattern[str] | None = None) -> list[Atom]:
    """Split text into grapheme clusters, keeping clusters of one unit together as runs.

    specials, from _specials, may be one made for a longer text holding this one.
    """
    if text.isascii():
        return [Atom(RUN, text, "", len(text))] if text else []
    atoms: list[Atom] = []
    run_from = 0
    for start, end in _segments(text, specials or _specials(text)):
        at = start
        for cluster in _graphemes(text[start:end]):
            if len(cluster) > 1 or ord(cluster) > 0xFFFF:
                if at > run_from:
                    atoms.append(Atom(RUN, text[run_from:at], "", at - run_from))
                atoms.append(Atom(TEXT, cluster, "", utf16_len(cluster)))
                run_from = at + len(cluster)
            at += len(cluster)
    if len(text) > run_from:
        atoms.append(Atom(RUN, text[run_from:], "", len(text) - run_from))
    return atoms


def _segments(text: str, specials: re.Pattern[str]) -> list[tuple[int, int]]:
    """Return the stretches around special characters whose clusters need working out.

    Each starts one character early (a letter may carry combining marks) and ends one late
    after a joiner (which takes the next character along); everywhere else a character is a
    cluster of its own.
    """
    segments: list[tuple[int, int]] = []
    for island in specials.finditer(text):
        start, end = max(island.start() - 1, 0), island.end()
        if text[end - 1] == _JOINER and end < len(text):
            end += 1
        if segments and start < segments[-1][1]:
            segments[-1] = (segments[-1][0], end)
        else:
            segments.append((start, end))
    return segments


def _specials(text: str) -> re.Pattern[str]:
    """Return a pattern for runs of the characters of text that may join a cluster, or take
    two units."""
    if text.isascii():
        return _NOTHING
    # Python's re has no class for combining marks: make one of those this text holds.
    found = sorted(c for c in set(text) if not c.isascii() and _special(c))
    return re.compile(f"[{''.join(map(re.escape, found))}]+") if found else _NOTHING


def _special(ch: str) -> bool:
    """Tell whether ch may continue a cluster (see _extends) or lies outside the BMP."""
    code = ord(ch)
    return (
        code > 0xFFFF
        or code == 0x200D
        or 0xFE00 <= code <= 0xFE0F
        or unicodedata.category(ch) in ("Mn", "Mc", "Me")
    )


def _graphemes(text: str) -> list[str]:
    """Group code points into (approximate) user-perceived characters."""
    clusters: list[str] = []
    units = 0  # of the last cluster, so that its length need not be measured again
    for ch in text:
        width = 2 if ch > "\uffff" else 1
        if clusters and units + width <= _MAX_CLUSTER_UNITS and _extends(clusters[-1], ch):
            clusters[-1] += ch
            units += width
        else:
            clusters.append(ch)
            units = width
    return clusters


def _extends(cluster: str, ch: str) -> bool:
    """Tell whether ch continues the cluster rather than starting a new one (size aside)."""
    code = ord(ch)
    # Fast path: nothing below the combining marks extends a cluster but a joiner.
    if (code < 0x300 and cluster[-1] != _JOINER) or cluster in ("\n", " "):
        return False
    if cluster[-1] == _JOINER:
        return True
    if 0x1F1E6 <= code <= 0x1F1FF:
        # Regional indicators pair up into one flag.
        return len(cluster) == 1 and 0x1F1E6 <= ord(cluster) <= 0x1F1FF
    return (
        code == 0x200D
        or 0xFE00 <= code <= 0xFE0F
        or 0x1F3FB <= code <= 0x1F3FF
        or 0xE0020 <= code <= 0xE007F
        or 0xE0100 <= code <= 0xE01EF
        or unicodedata.category(ch) in ("Mn", "Mc", "Me")
    )
