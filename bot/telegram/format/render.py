"""Render the model's Markdown as Telegram HTML.

The contract: any input string yields HTML Telegram accepts; unbalanced markup degrades to
literal text.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from bot.telegram.format.text import drop_empty_elements, normalize

# Emphasis nests this deep at most; deeper markup is kept as literal text so a
# pathological line cannot exhaust the recursion limit.
_MAX_DEPTH = 8

_EMPHASIS_TAGS = {"**": "b", "__": "b", "~~": "s", "*": "i", "_": "i"}

# Any indent: the model indents fences inside list items. An info string with
# a backtick means the line is inline code, not a fence.
_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_BULLET = re.compile(r"^([ \t]*)[-*][ \t]+(.*)$")
_QUOTE = re.compile(r"^ {0,3}> ?(.*)$")
_LINK = re.compile(r"\[([^\[\]\n]+)\]\((https?://(?:[^\s()]|\([^\s()]*\))+)\)")
# A bare URL stops at characters that are more likely markup than part of it.
_BARE_URL = re.compile(r"https?://[^\s<>*`~\[\]]+")
# Where inline markup may start; plain runs between them are copied whole.
_SPECIAL = re.compile(r"[\\`\[*_~]|(?:(?<=_)|(?<!\w))https?://")
# A backslash makes these literal, as in Markdown; before anything else it is text.
_ESCAPABLE = frozenset("\\`*_~[]()#+-.!>|")
_URL_TRAILERS = ".,;:!?'\")_]"
_LANG_CHARS = re.compile(r"[^\w+#.-]")

# Why a closer search failed: the text ran out, or the opener was part of a name.
_EXHAUSTED, _ABORTED = -1, -2


class _Node(NamedTuple):
    """An inline element: a tag, its attribute source, and its children."""

    tag: str
    attrs: str
    children: tuple[_Node | str, ...]


def render_html(markdown: str) -> str:
    """Convert the model's Markdown to Telegram-safe HTML."""
    lines = normalize(markdown).split("\n")
    blocks: list[str] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence:
            end = _fence_end(lines, i + 1, fence[2])
            body = [_dedent(line, len(fence[1])) for line in lines[i + 1 : end]]
            blocks.append(_render_pre(body, fence[3]))
            i = end + 1
            continue
        if _QUOTE.match(lines[i]):
            end = i
            while end < len(lines) and _QUOTE.match(lines[end]):
                end += 1
            blocks.append(_render_quote(lines[i:end]))
            i = end
            continue
        blocks.append(_render_line(lines[i]))
        i += 1
    return drop_empty_elements("\n".join(blocks))


def open_fence(markdown: str) -> str | None:
    """Return the line that opens a code fence left open at the end of markdown, or None."""
    lines = normalize(markdown).split("\n")
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence:
            end = _fence_end(lines, i + 1, fence[2])
            if end == len(lines):
                return lines[i]
            i = end
        i += 1
    return None


def _fence_end(lines: list[str], start: int, opener: str) -> int:
    """Return the index of the line closing a fence, or len(lines) if unterminated."""
    for i in range(start, len(lines)):
        closer = lines[i].strip()
        if len(closer) >= len(opener) and closer == opener[0] * len(closer):
            return i
    return len(lines)


def _render_pre(lines: list[str], lang: str) -> str:
    """Render the body of a fenced code block."""
    lang = _LANG_CHARS.sub("", lang)
    attrs = f' class="language-{_escape_attr(lang)}"' if lang else ""
    body = _escape("\n".join(lines))
    return f"<pre><code{attrs}>{body}</code></pre>"


def _dedent(line: str, indent: int) -> str:
    """Remove up to the fence's own indentation from a code line."""
    strip = len(line) - len(line.lstrip(" \t"))
    return line[min(strip, indent) :]


def _render_quote(lines: list[str]) -> str:
    """Render consecutive '>' lines as one blockquote."""
    body = "\n".join(_render_line(_QUOTE.match(line)[1]) for line in lines)
    return f"<blockquote>{body}</blockquote>"


def _render_line(line: str) -> str:
    """Render one line of prose: a heading, a bullet or inline text."""
    if _RULE.match(line):
        return _escape(line)
    heading = _HEADING.match(line)
    if heading:
        return _serialize([_Node("b", "", tuple(_parse_inline(heading[1])))])
    bullet = _BULLET.match(line)
    if bullet:
        return f"{bullet[1]}• {_serialize(_parse_inline(bullet[2]))}"
    return _serialize(_parse_inline(line))


def _parse_inline(text: str, depth: int = 0) -> list[_Node | str]:
    """Parse inline Markdown into nodes; anything unmatched stays literal text."""
    nodes: list[_Node | str] = []
    literal: list[str] = []
    failed: dict[str, int] = {}
    i = 0
    while i < len(text):
        node, end = _inline_at(text, i, depth, failed)
        if node is None:
            literal.append(text[i:end])
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


def _inline_at(
    text: str, i: int, depth: int, failed: dict[str, int]
) -> tuple[_Node | str | None, int]:
    """Return the construct at i (a node, replacement text, or None if literal) and its end."""
    c = text[i]
    if c == "\\" and text[i + 1 : i + 2] in _ESCAPABLE:
        return text[i + 1], i + 2
    if c == "`":
        run = _run(text, i)
        close = _code_close(text, i + run, run)
        if close == -1:
            return None, i + run
        return _Node("code", "", (_strip_code(text[i + run : close]),)), close + run
    if c == "[":
        link = _LINK.match(text, i)
        if link:
            children = tuple(_parse_inline(link[1], depth + 1))
            return _Node("a", f' href="{_escape_attr(link[2])}"', children), link.end()
    if c == "h":
        url_end = _bare_url_end(text, i)
        if url_end != -1:
            return None, url_end
    if c in "*_~":
        found = _emphasis(text, i, failed) if depth < _MAX_DEPTH else None
        if found is None:
            return None, i + _run(text, i)
        delim, close = found
        children = tuple(_parse_inline(text[i + len(delim) : close], depth + 1))
        return _Node(_EMPHASIS_TAGS[delim], "", children), close + len(delim)
    special = _SPECIAL.search(text, i + 1)
    return None, special.start() if special else len(text)


def _run(text: str, i: int) -> int:
    """Return how many times text[i] repeats from i."""
    end = i
    while end < len(text) and text[end] == text[i]:
        end += 1
    return end - i


def _code_close(text: str, start: int, run: int) -> int:
    """Return where a backtick run of exactly this length recurs, or -1."""
    j = start
    while True:
        j = text.find("`", j)
        if j == -1:
            return -1
        found = _run(text, j)
        if found == run:
            return j
        j += found


def _strip_code(content: str) -> str:
    """Drop the one space Markdown allows as padding inside a code span."""
    if len(content) > 2 and content[0] == content[-1] == " " and content.strip():
        return content[1:-1]
    return content


def _bare_url_end(text: str, i: int) -> int:
    """Return the end of a bare URL starting at i, or -1."""
    if i > 0 and text[i - 1].isalnum():
        return -1
    match = _BARE_URL.match(text, i)
    if not match:
        return -1
    # Trailing punctuation and markup belong to the sentence, not the URL.
    url = match[0].rstrip(_URL_TRAILERS)
    return i + len(url) if len(url) > len("https://") else -1


def _atomic_end(text: str, i: int) -> int:
    """Return the end of a code span, link or URL starting at i, or -1."""
    c = text[i]
    if c == "\\":
        return i + 2 if text[i + 1 : i + 2] in _ESCAPABLE else -1
    if c == "`":
        run = _run(text, i)
        close = _code_close(text, i + run, run)
        return close + run if close != -1 else i + run
    if c == "[":
        link = _LINK.match(text, i)
        return link.end() if link else -1
    if c == "h":
        return _bare_url_end(text, i)
    return -1


def _emphasis(text: str, i: int, failed: dict[str, int]) -> tuple[str, int] | None:
    """Return the delimiter opening emphasis at i and where it closes, or None."""
    ch = text[i]
    run = _run(text, i)
    if ch == "~" and run < 2:
        return None
    delim = ch * 2 if run >= 2 else ch
    after = i + len(delim)
    if after >= len(text) or text[after].isspace():
        return None
    # Underscores and single stars inside words are identifiers and arithmetic.
    if (ch == "_" or len(delim) == 1) and i > 0 and text[i - 1].isalnum():
        return None
    # Content is never empty: the rest of the opening run belongs to it.
    start = after + _run(text, after) if text[after] == ch else after
    # A search that ran out of text from some point fails from any later point too.
    if start >= failed.get(delim, len(text) + 1):
        return None
    close = _find_closer(text, start, delim)
    if close == _EXHAUSTED:
        failed[delim] = start
    return (delim, close) if close >= 0 else None


def _find_closer(text: str, j: int, delim: str) -> int:
    """Return where delim closes at or after j, skipping code, links and URLs."""
    ch = delim[0]
    while j < len(text):
        if text[j] == ch:
            run = _run(text, j)
            if _closes(text, j, run, delim):
                return j + run - len(delim)
            if ch == "_" and run == len(delim) and _inside_name(text, j, run):
                # The opener began a name such as _private_var or __init__.py.
                return _ABORTED
            j += run
            continue
        end = _atomic_end(text, j)
        j = end if end > j else j + 1
    return _EXHAUSTED


def _closes(text: str, j: int, run: int, delim: str) -> bool:
    """Tell whether the run at j can close delim (with its last characters)."""
    if text[j - 1].isspace() or run < len(delim):
        return False
    # A run of two is a nested bold or strike, never a single closer.
    if len(delim) == 1 and run == 2:
        return False
    return not ((delim[0] == "_" or len(delim) == 1) and _inside_name(text, j, run))


def _inside_name(text: str, j: int, run: int) -> bool:
    """Tell whether the run at j joins two parts of a word or a file name."""
    after = j + run
    if text[j - 1].isspace() or after >= len(text):
        return False
    if text[after].isalnum():
        return True
    return text[after] == "." and text[after + 1 : after + 2].isalnum()


def _serialize(
    nodes: list[_Node | str] | tuple[_Node | str, ...], stack: tuple[_Node, ...] = ()
) -> str:
    """Serialize nodes to HTML, keeping code out of other elements."""
    out: list[str] = []
    for node in nodes:
        if isinstance(node, str):
            out.append(_escape(node))
        elif node.tag == "code":
            # Telegram forbids code inside other entities: close them around it.
            closing = "".join(f"</{n.tag}>" for n in reversed(stack))
            opening = "".join(f"<{n.tag}{n.attrs}>" for n in stack)
            out.append(f"{closing}<code>{_escape(node.children[0])}</code>{opening}")
        else:
            inner = _serialize(node.children, (*stack, node))
            out.append(f"<{node.tag}{node.attrs}>{inner}</{node.tag}>")
    return "".join(out)


def _escape(text: str) -> str:
    """Escape text for Telegram HTML."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_attr(text: str) -> str:
    """Escape text for a double-quoted Telegram HTML attribute."""
    return _escape(text).replace('"', "&quot;")
