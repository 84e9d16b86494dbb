"""Tell when the model's Markdown reads better as a Telegram Rich Message, and if it fits one.

A Rich Message shows tables, headings, long lists and math as such, where a plain message
flattens them. The limits are the Bot API's (bot/telegram/native.py cites them); they are
counted here from above (every line a block, every character text), so a reply said to fit is
never refused for its size, and one near a limit simply goes as today's HTML.
"""

import html
import itertools
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

MAX_CHARS = 32_768
MAX_BLOCKS = 500
MAX_DEPTH = 16
MAX_TABLE_COLUMNS = 20
# A list this long reads better with real list items than as lines of text.
LONG_LIST_ITEMS = 8
# Indentation this wide counts as one more level of nesting.
INDENT = 2

_FENCE = re.compile(r"^\s*(```|~~~)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_HEADING = re.compile(r"^#{1,6}\s+\S")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\S")
_MATH = re.compile(r"\$\$[^$]+\$\$|\\\[.+?\\\]", re.DOTALL)
_QUOTES = re.compile(r"^\s*(?:>\s*)+")
# Markdown lets a backslash escape any ASCII punctuation, so text the bot did not write (a
# memory's content) can start no list, heading, link, formula or table cell of its own.
_PUNCTUATION = re.compile(f"([{re.escape(string.punctuation)}])")


def escape_markdown(text: str) -> str:
    """Return text as literal Markdown on one line: punctuation escaped, line breaks spaces."""
    return _PUNCTUATION.sub(r"\\\1", " ".join(text.split()))


@dataclass(frozen=True)
class Markup:
    """How the bot's own lists are written: HTML (a message) or Markdown (a Rich Message)."""

    escape: Callable[[str], str]
    italic: str  # format strings for {text}
    code: str
    struck: str


HTML = Markup(html.escape, "<i>{text}</i>", "<code>{text}</code>", "<s>{text}</s>")
MARKDOWN = Markup(escape_markdown, "*{text}*", "`{text}`", "~~{text}~~")


def _outside_code(markdown: str) -> list[str]:
    """Return the lines that are not inside a code block (nor its fences)."""
    lines, inside = [], False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            inside = not inside
        elif not inside:
            lines.append(line)
    return lines


def _has_table(lines: list[str]) -> bool:
    """Tell whether a header row followed by its rule (| --- | --- |) is among the lines."""
    return any(
        _TABLE_RULE.match(line) and "-" in line and "|" in previous
        for previous, line in itertools.pairwise(lines)
    )


def structured(markdown: str) -> bool:
    """Tell whether the Markdown holds a table, a heading, a long list or display math."""
    if len(markdown) > MAX_CHARS:
        return False  # never read past what a rich message could hold
    lines = _outside_code(markdown)
    if _has_table(lines) or any(_HEADING.match(line) for line in lines):
        return True
    if sum(1 for line in lines if _ITEM.match(line)) >= LONG_LIST_ITEMS:
        return True
    return _MATH.search("\n".join(lines)) is not None


def _depth(line: str) -> int:
    """Return how deep a line nests: its indentation and quote markers, counted from above."""
    indent = len(line) - len(line.lstrip(" \t"))
    quotes = _QUOTES.match(line)
    return 1 + indent // INDENT + (quotes.group(0).count(">") if quotes else 0)


def fits(markdown: str) -> bool:
    """Tell whether the Markdown keeps within a Rich Message's documented limits."""
    if len(markdown) > MAX_CHARS:
        return False
    lines = [line for line in markdown.splitlines() if line.strip()]
    if len(lines) > MAX_BLOCKS:
        return False
    # Inline formatting nests inside a block too: two levels are kept for it.
    if any(_depth(line) > MAX_DEPTH - 2 for line in lines):
        return False
    cells = (line.strip().strip("|").count("|") + 1 for line in lines if "|" in line)
    return max(cells, default=0) <= MAX_TABLE_COLUMNS


def rich_reply(markdown: str) -> bool:
    """Tell whether a reply goes as a Rich Message: structured, and within the limits."""
    return structured(markdown) and fits(markdown)


def rich_list(items: int, markdown: str) -> bool:
    """Tell whether a list the bot wrote itself goes as a Rich Message: long, within limits."""
    return items >= LONG_LIST_ITEMS and fits(markdown)
