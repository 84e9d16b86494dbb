"""HTML and plain text as atoms: tags, entities, grapheme clusters, and runs of ASCII text.

A run stands for as many atoms as it has characters (each one unit long), so splitting can
measure and search it with string methods instead of one object per character.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from bot.telegram.format.text import utf16_len

# Atom kinds.
TEXT, RUN, OPEN, CLOSE = 0, 1, 2, 3

_MAX_CLUSTER_UNITS = 16
_HTML_TOKEN = re.compile(
    r"<[^<>]*>|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{1,8});|[^<&]+|[<&]"
)
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_JOINER = "\u200d"


class Atom(NamedTuple):
    """An indivisible piece of HTML source (or a run of ASCII characters, each one)."""

    kind: int
    src: str
    name: str
    cost: int


def html_atoms(html_text: str) -> list[Atom]:
    """Tokenize HTML into tags, entities, grapheme clusters and ASCII runs."""
    atoms: list[Atom] = []
    for token in _HTML_TOKEN.findall(html_text):
        tag = _TAG.match(token) if token.endswith(">") else None
        if tag:
            kind = CLOSE if tag[1] else OPEN
            atoms.append(Atom(kind, token, tag[2].lower(), utf16_len(token)))
        elif token[0] == "&" and len(token) > 1:
            atoms.append(Atom(TEXT, token, "", len(token)))
        else:
            atoms.extend(text_atoms(token))
    return atoms


def text_atoms(text: str) -> list[Atom]:
    """Split text into grapheme clusters, keeping single ASCII characters together as runs."""
    if text.isascii():
        return [Atom(RUN, text, "", len(text))] if text else []
    atoms: list[Atom] = []
    ascii_from = 0
    for start, end in _segments(text):
        at = start
        for cluster in _graphemes(text[start:end]):
            if len(cluster) > 1 or not cluster.isascii():
                if at > ascii_from:
                    atoms.append(Atom(RUN, text[ascii_from:at], "", at - ascii_from))
                atoms.append(Atom(TEXT, cluster, "", utf16_len(cluster)))
                ascii_from = at + len(cluster)
            at += len(cluster)
    if len(text) > ascii_from:
        atoms.append(Atom(RUN, text[ascii_from:], "", len(text) - ascii_from))
    return atoms


def _segments(text: str) -> list[tuple[int, int]]:
    """Return the stretches around non-ASCII characters whose clusters need working out.

    Each starts one character early (an ASCII letter may carry combining marks) and ends one
    late after a joiner (which takes the next character along); everywhere else an ASCII
    character is a cluster of its own.
    """
    segments: list[tuple[int, int]] = []
    for island in _NON_ASCII.finditer(text):
        start, end = max(island.start() - 1, 0), island.end()
        if text[end - 1] == _JOINER and end < len(text):
            end += 1
        if segments and start < segments[-1][1]:
            segments[-1] = (segments[-1][0], end)
        else:
            segments.append((start, end))
    return segments


def _graphemes(text: str) -> list[str]:
    """Group code points into (approximate) user-perceived characters."""
    clusters: list[str] = []
    for ch in text:
        if clusters and _extends(clusters[-1], ch):
            clusters[-1] += ch
        else:
            clusters.append(ch)
    return clusters


def _extends(cluster: str, ch: str) -> bool:
    """Tell whether ch continues the cluster rather than starting a new one."""
    code = ord(ch)
    # Fast path: nothing below the combining marks extends a cluster but a joiner.
    if (code < 0x300 and cluster[-1] != _JOINER) or cluster in ("\n", " "):
        return False
    if utf16_len(cluster + ch) > _MAX_CLUSTER_UNITS:
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
