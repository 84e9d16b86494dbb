"""Split Telegram HTML into messages: each valid on its own and within Telegram's limit."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from bot.telegram.format.render import render_html
from bot.telegram.format.text import (
    MAX_MESSAGE_LENGTH,
    drop_empty_elements,
    html_to_plain,
    is_blank,
    normalize,
    utf16_len,
)

# Telegram counts text in UTF-16 code units; the smallest limit must still hold
# one capped grapheme cluster or one entity plus a little markup.
_MIN_LIMIT = 32
_MAX_CLUSTER_UNITS = 16
_HTML_TOKEN = re.compile(
    r"<[^<>]*>|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{1,8});|[^<&]+|[<&]"
)
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)")

# Atom kinds.
_TEXT, _OPEN, _CLOSE = 0, 1, 2
# Break ranks, most preferred first.
_PARAGRAPH, _LINE, _SPACE = 0, 1, 2
_BREAKS = frozenset((" ", "\n"))


class _Atom(NamedTuple):
    """An indivisible piece of HTML source: a tag, an entity or a grapheme."""

    kind: int
    src: str
    name: str
    cost: int


class _Open(NamedTuple):
    """An element open at some point of the HTML; inactive ones are not emitted."""

    name: str
    src: str
    active: bool


class _Break(NamedTuple):
    """A place where a piece may end, and where the next one then starts."""

    rank: int
    cut: int
    resume: int
    stack: tuple[_Open, ...]
    length: int


def split_html(html: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """Split rendered HTML into standalone valid pieces of at most limit UTF-16 units."""
    _check_limit(limit)
    pieces = (drop_empty_elements(p) for p in _pack(_html_atoms(html), limit))
    return [p for p in pieces if not is_blank(html_to_plain(p))]


def render_reply(markdown: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """Render a reply and split it into messages; a blank reply yields none."""
    _check_limit(limit)
    if is_blank(markdown):
        return []
    html = render_html(markdown)
    if utf16_len(html) <= limit:
        # Most replies fit in one message; splitting would return them whole, at a cost of
        # one object per character.
        piece = drop_empty_elements(html)
        return [] if is_blank(html_to_plain(piece)) else [piece]
    return split_html(html, limit)


def split_plain(text: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """Split plain text into pieces of at most limit UTF-16 units."""
    _check_limit(limit)
    atoms = [_text_atom(g) for g in _graphemes(normalize(text))]
    return [p for p in _pack(atoms, limit) if not is_blank(p)]


def _check_limit(limit: int) -> None:
    """Reject limits too small to hold every indivisible unit."""
    if limit < _MIN_LIMIT:
        raise ValueError(f"limit must be at least {_MIN_LIMIT}, got {limit}")


def _text_atom(src: str) -> _Atom:
    """Make an atom of visible text."""
    return _Atom(_TEXT, src, "", utf16_len(src))


def _html_atoms(html_text: str) -> list[_Atom]:
    """Tokenize HTML into tags, entities and grapheme clusters."""
    atoms: list[_Atom] = []
    for token in _HTML_TOKEN.findall(html_text):
        tag = _TAG.match(token) if token.endswith(">") else None
        if tag:
            kind = _CLOSE if tag[1] else _OPEN
            atoms.append(_Atom(kind, token, tag[2].lower(), utf16_len(token)))
        elif token[0] == "&":
            atoms.append(_text_atom(token))
        elif token.isascii():
            # Fast path: ASCII characters are whole graphemes of one unit each.
            atoms.extend(_Atom(_TEXT, c, "", 1) for c in token)
        else:
            atoms.extend(_text_atom(g) for g in _graphemes(token))
    return atoms


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
    if (code < 0x300 and cluster[-1] != "\u200d") or cluster in ("\n", " "):
        return False
    if utf16_len(cluster + ch) > _MAX_CLUSTER_UNITS:
        return False
    if cluster[-1] == "\u200d":
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


def _pack(atoms: list[_Atom], limit: int) -> list[str]:
    """Greedily pack atoms into pieces of at most limit units, cutting at breaks."""
    pieces: list[str] = []
    stack: tuple[_Open, ...] = ()
    start = 0
    while start < len(atoms):
        emitted, brk = _fill(atoms, start, stack, limit)
        if brk is None:
            # Not even one atom fits beside the reopened tags: drop their formatting.
            stack = tuple(o._replace(active=False) for o in stack)
            continue
        body = "".join(emitted[: brk.cut - start])
        pieces.append(_opening(stack) + body + _closing(brk.stack))
        start, stack = _skip_space(atoms, brk.resume, brk.stack)
    return pieces


def _skip_space(
    atoms: list[_Atom], j: int, stack: tuple[_Open, ...]
) -> tuple[int, tuple[_Open, ...]]:
    """Skip whitespace and end tags after a cut, so pieces do not start blank."""
    while j < len(atoms) and (atoms[j].kind == _CLOSE or atoms[j].src in (" ", "\n", "\t")):
        if atoms[j].kind == _TEXT and any(o.name in ("pre", "code") for o in stack):
            # Leading whitespace in code is indentation, which must survive.
            break
        stack = _apply(stack, atoms[j])[0]
        j += 1
    return j, stack


def _fill(
    atoms: list[_Atom], start: int, stack: tuple[_Open, ...], limit: int
) -> tuple[list[str], _Break | None]:
    """Take atoms from start while they fit; return their source and where to cut."""
    length = utf16_len(_opening(stack))
    close_cost = utf16_len(_closing(stack))
    emitted: list[str] = []
    breaks: list[_Break] = []
    j = start
    while j < len(atoms):
        atom = atoms[j]
        if atom.kind == _TEXT:
            if atom.src in _BREAKS and j > start:
                breaks.extend(_breaks_at(atoms, j, stack, length))
            new_stack, src, cost, new_close = stack, atom.src, atom.cost, close_cost
        else:
            new_stack, src = _apply(stack, atom)
            cost, new_close = utf16_len(src), utf16_len(_closing(new_stack))
        if length + cost + new_close > limit:
            if j > start:
                return emitted, _choose(breaks, j, stack, length, limit)
            if atom.kind != _OPEN or any(o.active for o in stack):
                return emitted, None
            # A tag too long for any piece: keep its text, lose its formatting.
            new_stack, src, cost = (*stack, _Open(atom.name, atom.src, False)), "", 0
            new_close = close_cost
        emitted.append(src)
        length += cost
        stack, close_cost = new_stack, new_close
        j += 1
    return emitted, _Break(_PARAGRAPH, j, j, stack, length)


def _breaks_at(atoms: list[_Atom], j: int, stack: tuple[_Open, ...], length: int) -> list[_Break]:
    """Return the breaks that a whitespace atom at j offers."""
    src = atoms[j].src
    if src == " ":
        return [_Break(_SPACE, j, j + 1, stack, length)]
    if src != "\n":
        return []
    breaks = [_Break(_LINE, j, j + 1, stack, length)]
    if j + 1 < len(atoms) and atoms[j + 1].src == "\n":
        breaks.append(_Break(_PARAGRAPH, j, j + 2, stack, length))
    return breaks


def _choose(
    breaks: list[_Break], j: int, stack: tuple[_Open, ...], length: int, limit: int
) -> _Break:
    """Pick the best break: the latest of the best rank past half the piece."""
    # A break early in the piece would waste a message; cut hard instead.
    for rank in (_PARAGRAPH, _LINE, _SPACE):
        for brk in reversed(breaks):
            if brk.rank == rank and brk.length >= limit // 2:
                return brk
    return _Break(_SPACE, j, j, stack, length)


def _apply(stack: tuple[_Open, ...], atom: _Atom) -> tuple[tuple[_Open, ...], str]:
    """Return the open elements after atom, and the source atom contributes."""
    if atom.kind == _OPEN:
        src = atom.src
        if atom.name == "code" and not (stack and stack[-1].name == "pre" and stack[-1].active):
            # A language class is only valid on code directly inside pre.
            src = "<code>"
        return (*stack, _Open(atom.name, src, True)), src
    if atom.kind == _CLOSE:
        if not stack or stack[-1].name != atom.name:
            # A stray end tag would make Telegram reject the piece; drop it.
            return stack, ""
        return stack[:-1], atom.src if stack[-1].active else ""
    return stack, atom.src


def _opening(stack: tuple[_Open, ...]) -> str:
    """Return the start tags that reopen the active elements."""
    return "".join(o.src for o in stack if o.active)


def _closing(stack: tuple[_Open, ...]) -> str:
    """Return the end tags that close the active elements."""
    return "".join(f"</{o.name}>" for o in reversed(stack) if o.active)
