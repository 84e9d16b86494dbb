"""Split Telegram HTML into messages: each valid on its own and within Telegram's limit.

Linear in the HTML: a piece is filled once from where the previous one ended (a cut goes back
at most half a piece), runs of ASCII text are measured and searched for breaks with string
methods, and the open elements are a persistent stack.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from bot.telegram.format import stack as st
from bot.telegram.format.atoms import CLOSE, OPEN, RUN, TEXT, Atom, html_atoms, text_atoms
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
# Break ranks, most preferred first, with what each is made of and how much a cut skips.
_PARAGRAPH, _LINE, _SPACE = 0, 1, 2
_BREAK_TEXT = ((_PARAGRAPH, "\n\n", 2), (_LINE, "\n", 1), (_SPACE, " ", 1))
_SKIPPED = re.compile("[ \n\t]*")

_new = tuple.__new__

# A place among the atoms: an atom's index, and an offset into it if it is a run.
Position = tuple[int, int]


class _Break(NamedTuple):
    """A place where a piece may end, and where the next one then starts."""

    rank: int
    cut: int  # characters of the piece's body before the break
    resume: Position
    stack: st.Stack
    length: int


def split_html(html: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """Split rendered HTML into standalone valid pieces of at most limit UTF-16 units."""
    _check_limit(limit)
    pieces = (drop_empty_elements(p) for p in _pack(html_atoms(html), limit))
    return [p for p in pieces if not is_blank(html_to_plain(p))]


def render_reply(markdown: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """Render a reply and split it into messages; a blank reply yields none."""
    _check_limit(limit)
    if is_blank(markdown):
        return []
    html = render_html(markdown)
    if utf16_len(html) <= limit:
        # Most replies fit in one message, and splitting would return them whole.
        piece = drop_empty_elements(html)
        return [] if is_blank(html_to_plain(piece)) else [piece]
    return split_html(html, limit)


def split_plain(text: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """Split plain text into pieces of at most limit UTF-16 units."""
    _check_limit(limit)
    return [p for p in _pack(text_atoms(normalize(text)), limit) if not is_blank(p)]


def _check_limit(limit: int) -> None:
    """Reject limits too small to hold every indivisible unit."""
    if limit < _MIN_LIMIT:
        raise ValueError(f"limit must be at least {_MIN_LIMIT}, got {limit}")


def _pack(atoms: list[Atom], limit: int) -> list[str]:
    """Greedily pack atoms into pieces of at most limit units, cutting at breaks."""
    pieces: list[str] = []
    stack: st.Stack = None
    start: Position = (0, 0)
    while start[0] < len(atoms):
        body, brk = _Piece(atoms, start, stack, limit).fill()
        if brk is None:
            # Not even one atom fits beside the reopened tags: drop their formatting.
            stack = st.deactivate(stack)
            continue
        pieces.append(st.opening(stack) + body[: brk.cut] + st.closing(brk.stack))
        start, stack = _skip_space(atoms, brk.resume, brk.stack)
    return pieces


def _skip_space(atoms: list[Atom], at: Position, stack: st.Stack) -> tuple[Position, st.Stack]:
    """Skip whitespace and end tags after a cut, so pieces do not start blank."""
    i, k = at
    while i < len(atoms):
        atom = atoms[i]
        if atom.kind == CLOSE:
            stack = _apply(stack, atom)[0]
        elif atom.kind != RUN or st.keeps_space(stack):
            # Leading whitespace in code is indentation, which must survive.
            break
        else:
            # _SKIPPED matches the empty string too, so it always matches.
            k = _SKIPPED.match(atom.src, k).end()  # type: ignore[union-attr]
            if k < len(atom.src):
                break
        i, k = i + 1, 0
    return (i, k), stack


class _Piece:
    """One piece being filled from a start: what it holds and where it may end."""

    def __init__(self, atoms: list[Atom], start: Position, stack: st.Stack, limit: int):
        self.atoms, self.start, self.stack, self.limit = atoms, start, stack, limit
        self.length = utf16_len(st.opening(stack))
        self.emitted: list[str] = []
        self.size = 0  # characters emitted
        # The latest break of each rank; an earlier one of the same rank is never better.
        self.breaks: dict[int, _Break] = {}
        self.best = len(_BREAK_TEXT)  # the best rank noted so far

    def fill(self) -> tuple[str, _Break | None]:
        """Take atoms while they fit; return their source and where to cut, or None."""
        atoms = self.atoms
        i, k = self.start
        while i < len(atoms):
            atom = atoms[i]
            over = self._take_run(atom, i, k) if atom.kind == RUN else self._take(atom, i)
            if over is not None:
                body = "".join(self.emitted)
                if over == self.start:
                    return body, None
                return body, self._choose(over)
            i, k = i + 1, 0
        return "".join(self.emitted), _Break(_PARAGRAPH, self.size, (i, 0), self.stack, self.length)

    def _take(self, atom: Atom, i: int) -> Position | None:
        """Take one atom if it fits; return its position if it does not."""
        if atom.kind == TEXT:
            new_stack, src, cost = self.stack, atom.src, atom.cost
        else:
            new_stack, src = _apply(self.stack, atom)
            # A tag contributes its own source, or ASCII that replaces it.
            cost = atom.cost if src is atom.src else len(src)
        if self.length + cost + (new_stack.close_cost if new_stack else 0) > self.limit:
            if (i, 0) != self.start or atom.kind != OPEN or st.has_active(self.stack):
                return (i, 0)
            # A tag too long for any piece: keep its text, lose its formatting.
            new_stack, src, cost = st.push(self.stack, atom.name, atom.src, False), "", 0
        self.emitted.append(src)
        self.size += len(src)
        self.length += cost
        self.stack = new_stack
        return None

    def _take_run(self, atom: Atom, i: int, k: int) -> Position | None:
        """Take as much of a run from k as fits; return where it overflowed, if it did."""
        text, length = atom.src, self.length
        room = self.limit - length - (self.stack.close_cost if self.stack else 0)
        fits = max(0, min(len(text) - k, room))
        # A break before half the piece is never chosen: look only past it. The character
        # that overflows still offers its break, as a whitespace atom would.
        lo = max(k + 1 if (i, k) == self.start else k, k + self.limit // 2 - length)
        if lo <= k + fits:
            self._note_breaks(text, i, k, lo, k + fits + 1)
        self.emitted.append(text[k : k + fits] if k or fits < len(text) else text)
        self.size += fits
        self.length = length + fits
        return None if k + fits == len(text) else (i, k + fits)

    def _note_breaks(self, text: str, i: int, k: int, lo: int, hi: int) -> None:
        """Remember the latest break of each rank at positions lo..hi-1 of a run."""
        for rank, sep, skip in _BREAK_TEXT:
            if rank > self.best:
                break  # every break noted is past half the piece, so a better rank wins
            # A paragraph break is the first of two newlines; the second may lie past hi.
            at = text.rfind(sep, lo, min(hi + len(sep) - 1, len(text)))
            if at != -1:
                resume = (i, at + skip) if at + skip < len(text) else (i + 1, 0)
                cut, length = self.size + at - k, self.length + at - k
                self.breaks[rank] = _new(_Break, (rank, cut, resume, self.stack, length))
                self.best = rank

    def _choose(self, over: Position) -> _Break:
        """Pick the best break: the latest of the best rank past half the piece."""
        # A break early in the piece would waste a message (so none is noted); cut hard instead.
        for rank in (_PARAGRAPH, _LINE, _SPACE):
            if rank in self.breaks:
                return self.breaks[rank]
        return _Break(_SPACE, self.size, over, self.stack, self.length)


def _apply(stack: st.Stack, atom: Atom) -> tuple[st.Stack, str]:
    """Return the open elements after a tag, and the source the tag contributes."""
    if atom.kind == OPEN:
        src = atom.src
        if atom.name == "code" and not (stack and stack.name == "pre" and stack.active):
            # A language class is only valid on code directly inside pre.
            src = "<code>"
        return st.push(stack, atom.name, src, True), src
    if stack is None or stack.name != atom.name:
        # A stray end tag would make Telegram reject the piece; drop it.
        return stack, ""
    return stack.outer, atom.src if stack.active else ""
