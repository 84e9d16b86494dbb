"""Render the model's Markdown as Telegram HTML.

The contract: any input string yields HTML Telegram accepts; unbalanced markup degrades to
literal text. Every step is linear in the input: lines are matched by patterns that cannot
backtrack far, and inline text by the parser in inline.py.
"""

from __future__ import annotations

import re

from bot.telegram.format.inline import Node, parse_inline
from bot.telegram.format.text import drop_empty_elements, escape_attr, escape_html, normalize

# Any indent: the model indents fences inside list items.
_FENCE = re.compile(r"([ \t]*)(`{3,}|~{3,})")
_FENCE_LANG = re.compile(r"[ \t]*([^\s`]*)")
_HEADING = re.compile(r" {0,3}#{1,6}[ \t]+")
_BULLET = re.compile(r"^([ \t]*)[-*][ \t]+(.*)$")
_QUOTE = re.compile(r"^ {0,3}> ?(.*)$")
_LANG_CHARS = re.compile(r"[^\w+#.-]")


def render_html(markdown: str) -> str:
    """Convert the model's Markdown to Telegram-safe HTML."""
    lines = normalize(markdown).split("\n")
    blocks: list[str] = []
    i = 0
    while i < len(lines):
        fence = _fence(lines[i])
        if fence:
            indent, opener, lang = fence
            end = _fence_end(lines, i + 1, opener)
            body = [_dedent(line, indent) for line in lines[i + 1 : end]]
            blocks.append(_render_pre(body, lang))
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


def _fence(line: str) -> tuple[int, str, str] | None:
    """Return a fence line's indent width, its run and its language, or None."""
    opening = _FENCE.match(line)
    # An info string with a backtick means the line is inline code, not a fence.
    if not opening or line.find("`", opening.end()) != -1:
        return None
    lang = _FENCE_LANG.match(line, opening.end())
    assert lang is not None
    return len(opening[1]), opening[2], lang[1]


def open_fence(markdown: str) -> str | None:
    """Return the line that opens a code fence left open at the end of markdown, or None."""
    lines = normalize(markdown).split("\n")
    i = 0
    while i < len(lines):
        fence = _fence(lines[i])
        if fence:
            end = _fence_end(lines, i + 1, fence[1])
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
    attrs = f' class="language-{escape_attr(lang)}"' if lang else ""
    body = escape_html("\n".join(lines))
    return f"<pre><code{attrs}>{body}</code></pre>"


def _dedent(line: str, indent: int) -> str:
    """Remove up to the fence's own indentation from a code line."""
    strip = len(line) - len(line.lstrip(" \t"))
    return line[min(strip, indent) :]


def _render_quote(lines: list[str]) -> str:
    """Render consecutive '>' lines as one blockquote."""
    # Every line of a quote matches _QUOTE: substituting its body strips the marker.
    body = "\n".join(_render_line(_QUOTE.sub(r"\1", line)) for line in lines)
    return f"<blockquote>{body}</blockquote>"


def _render_line(line: str) -> str:
    """Render one line of prose: a heading, a bullet or inline text."""
    if _is_rule(line):
        return escape_html(line)
    heading = _heading(line)
    if heading is not None:
        return _serialize([Node("b", "", tuple(parse_inline(heading)))])
    bullet = _BULLET.match(line)
    if bullet:
        return f"{bullet[1]}• {_serialize(parse_inline(bullet[2]))}"
    return _serialize(parse_inline(line))


def _is_rule(line: str) -> bool:
    """Tell whether a line is a thematic break such as --- or * * *."""
    # Up to three spaces, then three or more of one of -*_ with only spaces and tabs between:
    # string methods, since a pattern backtracks over every mark of a long run that fails.
    marks = line.lstrip(" ")
    if len(line) - len(marks) > 3 or marks[:1] not in ("-", "*", "_"):
        return False
    return not marks.strip(marks[0] + " \t") and marks.count(marks[0]) >= 3


def _heading(line: str) -> str | None:
    """Return the text of a heading line, without its marks, or None."""
    marks = _HEADING.match(line)
    if not marks:
        return None
    text = line[marks.end() :].rstrip(" \t")
    # A closing run of #s, after a space or tab, is a mark too.
    bare = text.rstrip("#")
    if bare != text and bare[-1:] in (" ", "\t"):
        return bare.rstrip(" \t")
    return text


def _serialize(
    nodes: list[Node | str] | tuple[Node | str, ...], stack: tuple[Node, ...] = ()
) -> str:
    """Serialize nodes to HTML, keeping code out of other elements."""
    out: list[str] = []
    for node in nodes:
        if isinstance(node, str):
            out.append(escape_html(node))
        elif node.tag == "code":
            # Telegram forbids code inside other entities: close them around it.
            closing = "".join(f"</{n.tag}>" for n in reversed(stack))
            opening = "".join(f"<{n.tag}{n.attrs}>" for n in stack)
            code = "".join(child for child in node.children if isinstance(child, str))
            out.append(f"{closing}<code>{escape_html(code)}</code>{opening}")
        else:
            inner = _serialize(node.children, (*stack, node))
            out.append(f"<{node.tag}{node.attrs}>{inner}</{node.tag}>")
    return "".join(out)
