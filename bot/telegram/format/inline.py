"""Parse one line's inline Markdown into nodes, in time linear in its length.

Emphasis opens where a delimiter has a closer later in the same range; the search for a
closer walks the range, skipping code spans, links and URLs. Where the walk goes next from a
position depends only on that position, so each range remembers, per delimiter, what every
walk found from each position it passed: no position is walked twice for one delimiter.
"""

from __future__ import annotations

from typing import NamedTuple

from bot.telegram.format.scan import Line
from bot.telegram.format.text import escape_attr

# Emphasis nests this deep at most; deeper markup is kept as literal text so a
# pathological line cannot exhaust the recursion limit.
_MAX_DEPTH = 8

_EMPHASIS_TAGS = {"**": "b", "__": "b", "~~": "s", "*": "i", "_": "i"}

# Why a closer search failed: the text ran out, or the opener was part of a name.
_EXHAUSTED, _ABORTED = -1, -2


class Node(NamedTuple):
    """An inline element: a tag, its attribute source, and its children."""

    tag: str
    attrs: str
    children: tuple[Node | str, ...]


class _Range:
    """A part of a line parsed as a string of its own, and the closer searches made in it."""

    __slots__ = ("closers", "depth", "failed", "hi", "line")

    def __init__(self, line: Line, hi: int, depth: int) -> None:
        self.line, self.hi, self.depth = line, hi, depth
        # The earliest start from which a search for each delimiter ran out of text.
        self.failed: dict[str, int] = {}
        # Per delimiter: what a closer search found from each position it passed.
        self.closers: dict[str, dict[int, int]] = {}


def parse_inline(text: str) -> list[Node | str]:
    """Parse inline Markdown into nodes; anything unmatched stays literal text."""
    return _parse(Line(text), 0, len(text), 0)


def _parse(line: Line, lo: int, hi: int, depth: int) -> list[Node | str]:
    """Parse line.text[lo:hi] as if it were the whole text."""
    span = _Range(line, hi, depth)
    nodes: list[Node | str] = []
    literal: list[str] = []
    i = lo
    while i < hi:
        node, end = _inline_at(span, i)
        if node is None:
            literal.append(line.text[i:end])
        elif isinstance(node, str):
            literal.append(node)
        else:
            if literal:
                nodes.append("".join(literal))
                literal = []
            nodes.append(node)
        i = end
    if literal:
        nodes.append("".join(literal))
    return nodes


def _inline_at(span: _Range, i: int) -> tuple[Node | str | None, int]:
    """Return the construct at i (a node, replacement text, or None if literal) and its end."""
    line, hi = span.line, span.hi
    text = line.text
    c = text[i]
    if c == "\\" and line.escapes(i, hi):
        return text[i + 1], i + 2
    if c == "`":
        run = line.run(i, hi)
        close = line.code_close(i + run, run, hi)
        if close == -1:
            return None, i + run
        return Node("code", "", (_strip_code(text[i + run : close]),)), close + run
    if c == "[":
        link = line.link(i, hi)
        if link:
            children = tuple(_parse(line, link.start(1), link.end(1), span.depth + 1))
            return Node("a", f' href="{escape_attr(link[2])}"', children), link.end()
    if c == "h":
        url_end = line.url_end(i, hi)
        if url_end != -1:
            return None, url_end
    if c in "*_~":
        return _emphasis_at(span, i)
    return None, line.next_special(i + 1, hi)


def _emphasis_at(span: _Range, i: int) -> tuple[Node | None, int]:
    """Return the emphasis opening at i and its end, or None and the end of the run."""
    found = _emphasis(span, i) if span.depth < _MAX_DEPTH else None
    if found is None:
        return None, i + span.line.run(i, span.hi)
    delim, close = found
    children = tuple(_parse(span.line, i + len(delim), close, span.depth + 1))
    return Node(_EMPHASIS_TAGS[delim], "", children), close + len(delim)


def _strip_code(content: str) -> str:
    """Drop the one space Markdown allows as padding inside a code span."""
    if len(content) > 2 and content[0] == content[-1] == " " and content.strip():
        return content[1:-1]
    return content


def _emphasis(span: _Range, i: int) -> tuple[str, int] | None:
    """Return the delimiter opening emphasis at i and where it closes, or None."""
    line, hi = span.line, span.hi
    text = line.text
    ch = text[i]
    run = line.run(i, hi)
    if ch == "~" and run < 2:
        return None
    delim = ch * 2 if run >= 2 else ch
    after = i + len(delim)
    if after >= hi or text[after].isspace():
        return None
    # Underscores and single stars inside words are identifiers and arithmetic.
    if (ch == "_" or len(delim) == 1) and i > 0 and text[i - 1].isalnum():
        return None
    # Content is never empty: the rest of the opening run belongs to it.
    start = after + line.run(after, hi) if text[after] == ch else after
    # A search that ran out of text from some point fails from any later point too.
    if start >= span.failed.get(delim, hi + 1):
        return None
    close = _find_closer(span, start, delim)
    if close == _EXHAUSTED:
        span.failed[delim] = start
    return (delim, close) if close >= 0 else None


def _find_closer(span: _Range, j: int, delim: str) -> int:
    """Return where delim closes at or after j, or why it does not, remembering the walk."""
    line, hi = span.line, span.hi
    text = line.text
    known = span.closers.setdefault(delim, {})
    ch = delim[0]
    walked: list[int] = []
    found = _EXHAUSTED
    while j < hi:
        if j in known:
            found = known[j]
            break
        walked.append(j)
        if text[j] != ch:
            j = _step(line, j, hi)
            continue
        run = line.run(j, hi)
        if _closes(text, j, run, delim, hi):
            found = j + run - len(delim)
            break
        if ch == "_" and run == len(delim) and _inside_name(text, j, run, hi):
            # The opener began a name such as _private_var or __init__.py.
            found = _ABORTED
            break
        j += run
    for position in walked:
        known[position] = found
    return found


def _step(line: Line, j: int, hi: int) -> int:
    """Return where a closer search goes from j, which holds no closer candidate."""
    end = line.atomic_end(j, hi)
    if end > j:
        return end
    if line.text[j] in "*_~":
        # Another delimiter's run: nothing inside it can start a code span, link or URL.
        return j + line.run(j, hi)
    return line.next_special(j + 1, hi)


def _closes(text: str, j: int, run: int, delim: str, hi: int) -> bool:
    """Tell whether the run at j can close delim (with its last characters)."""
    if text[j - 1].isspace() or run < len(delim):
        return False
    # A run of two is a nested bold or strike, never a single closer.
    if len(delim) == 1 and run == 2:
        return False
    return not ((delim[0] == "_" or len(delim) == 1) and _inside_name(text, j, run, hi))


def _inside_name(text: str, j: int, run: int, hi: int) -> bool:
    """Tell whether the run at j joins two parts of a word or a file name."""
    after = j + run
    if text[j - 1].isspace() or after >= hi:
        return False
    if text[after].isalnum():
        return True
    return text[after] == "." and after + 1 < hi and text[after + 1].isalnum()
