"""What one line of inline Markdown holds, each fact found once, so parsing stays linear.

The parser reads ranges of a line (the line, then the inside of each emphasis and each link
text) as if each range were a string of its own: every answer here is clipped to the range's
end, hi. A range starts right after a delimiter or a '[', and ends at a delimiter, a ']' or
the line's end, so a backtick run never crosses either end of one.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

_LINK = re.compile(r"\[([^\[\]\n]+)\]\((https?://(?:[^\s()]|\([^\s()]*\))+)\)")
# A bare URL stops at characters that are more likely markup than part of it.
_URL_CHARS = re.compile(r"[^\s<>*`~\[\]]+")
_URL_PREFIXES = ("https://", "http://")
# Trailing punctuation and markup belong to the sentence, not the URL.
_URL_TRAILERS = re.compile(r"[.,;:!?'\")_\]]+")
# Where inline markup may start; plain runs between them are copied whole.
_SPECIAL = re.compile(r"[\\`\[*_~]|(?:(?<=_)|(?<!\w))https?://")
# A backslash makes these literal, as in Markdown; before anything else it is text.
_ESCAPABLE = frozenset("\\`*_~[]()#+-.!>|")
_RUNS = {c: re.compile(re.escape(c) + "+") for c in "`*_~"}


class Line:
    """One line of inline Markdown, and what has been found out about it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._links: dict[int, re.Match[str] | None] = {}
        self._ticks: dict[int, list[int]] | None = None
        self._url_ends: list[int] | None = None
        self._backwards: str | None = None
        self._stripped: dict[int, int] = {}

    def run(self, i: int, hi: int) -> int:
        """Return how many times text[i] (a backtick or delimiter) repeats from i, before hi."""
        found = _RUNS[self.text[i]].match(self.text, i, hi)
        assert found is not None
        return found.end() - i

    def escapes(self, i: int, hi: int) -> bool:
        """Tell whether the backslash at i makes the next character literal."""
        return i + 1 < hi and self.text[i + 1] in _ESCAPABLE

    def next_special(self, i: int, hi: int) -> int:
        """Return where inline markup may next start at or after i, or hi."""
        found = _SPECIAL.search(self.text, i, hi)
        return found.start() if found else hi

    def code_close(self, start: int, run: int, hi: int) -> int:
        """Return where a backtick run of exactly run recurs at or after start, or -1."""
        if self._ticks is None:
            self._ticks = {}
            for tick in re.finditer("`+", self.text):
                self._ticks.setdefault(tick.end() - tick.start(), []).append(tick.start())
        starts = self._ticks.get(run, [])
        k = bisect_left(starts, start)
        return starts[k] if k < len(starts) and starts[k] < hi else -1

    def link(self, i: int, hi: int) -> re.Match[str] | None:
        """Return the inline link starting at i and ending by hi, or None."""
        if i not in self._links:
            self._links[i] = _LINK.match(self.text, i)
        found = self._links[i]
        # The pattern can match only one way, decided character by character, so the match
        # in the whole line is the range's own whenever it ends inside the range.
        return found if found and found.end() <= hi else None

    def url_end(self, i: int, hi: int) -> int:
        """Return the end of a bare URL starting at i, or -1."""
        text = self.text
        if (i > 0 and text[i - 1].isalnum()) or not text.startswith(_URL_PREFIXES, i, hi):
            return -1
        if self._url_ends is None:
            self._url_ends = [chars.end() for chars in _URL_CHARS.finditer(text)]
        end = self._strip_trailers(min(self._url_ends[bisect_right(self._url_ends, i)], hi))
        return end if end - i > len("https://") else -1

    def _strip_trailers(self, end: int) -> int:
        """Return end moved back over the URL trailers just before it."""
        if end not in self._stripped:
            if self._backwards is None:
                self._backwards = self.text[::-1]
            # Matching forwards in the reversed line is scanning backwards from end; the
            # "https://" before any end stops it, so no scan leaves its URL.
            trailers = _URL_TRAILERS.match(self._backwards, len(self.text) - end)
            self._stripped[end] = end - (trailers.end() - trailers.start()) if trailers else end
        return self._stripped[end]

    def atomic_end(self, i: int, hi: int) -> int:
        """Return the end of an escape, code span, link or URL starting at i, or -1."""
        c = self.text[i]
        if c == "\\":
            return i + 2 if self.escapes(i, hi) else -1
        if c == "`":
            run = self.run(i, hi)
            close = self.code_close(i + run, run, hi)
            return close + run if close != -1 else i + run
        if c == "[":
            link = self.link(i, hi)
            return link.end() if link else -1
        if c == "h":
            return self.url_end(i, hi)
        return -1
