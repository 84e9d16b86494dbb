"""Render the model's Markdown as Telegram HTML and split it into sendable messages.

The contract: no reply is ever rejected by Telegram for its formatting, and no
message is longer than Telegram allows. Everything here is pure and total: any
input string yields valid output, and unbalanced markup degrades to literal text.
"""

from __future__ import annotations

import re
import unicodedata
from html import unescape
from typing import NamedTuple

MAX_MESSAGE_LENGTH = 4096

# Telegram counts text in UTF-16 code units; the smallest limit must still hold
# one capped grapheme cluster or one entity plus a little markup.
_MIN_LIMIT = 32
_MAX_CLUSTER_UNITS = 16
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
_EMPTY_ELEMENT = re.compile(r"<(b|i|s|u|a|code|pre|blockquote)(?: [^<>]*)?></\1>")
_HTML_TOKEN = re.compile(
    r"<[^<>]*>|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{1,8});|[^<&]+|[<&]"
)
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)")

# What Telegram treats as nothing at all (TDLib's clean_input_string and
# strip_empty_characters): a message of only these is rejected as empty.
_BLANK = "".join(
    [chr(c) for c in range(0x21)]
    + [chr(c) for c in range(0x2000, 0x2010)]
    + [chr(c) for c in range(0x2028, 0x2030)]
    + [chr(c) for c in range(0xE0000, 0xE0080)]
    + list("\u00a0\u030a\u0333\u033f\u1680\u180e\u205f\u2800\u3000\ufeff\ufffc")
)

# Atom kinds for the splitter.
_TEXT, _OPEN, _CLOSE = 0, 1, 2
# Break ranks for the splitter, most preferred first.
_PARAGRAPH, _LINE, _SPACE = 0, 1, 2
_BREAKS = frozenset((" ", "\n"))
# Why a closer search failed: the text ran out, or the opener was part of a name.
_EXHAUSTED, _ABORTED = -1, -2


class _Node(NamedTuple):
    """An inline element: a tag, its attribute source, and its children."""

    tag: str
    attrs: str
    children: tuple[_Node | str, ...]


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


# ---------------------------------------------------------------------------
# Public API


def render_html(markdown: str) -> str:
    """Convert the model's Markdown to Telegram-safe HTML."""
    lines = _normalize(markdown).split("\n")
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
    return _drop_empty_elements("\n".join(blocks))


def split_html(html: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """Split rendered HTML into standalone valid pieces of at most limit UTF-16 units."""
    _check_limit(limit)
    pieces = (_drop_empty_elements(p) for p in _pack(_html_atoms(html), limit))
    return [p for p in pieces if not _is_blank(html_to_plain(p))]


def render_reply(markdown: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """Render a reply and split it into messages; a blank reply yields none."""
    _check_limit(limit)
    if _is_blank(markdown):
        return []
    html = render_html(markdown)
    if _utf16_len(html) <= limit:
        # Most replies fit in one message; splitting would return them whole, at a cost of
        # one object per character.
        piece = _drop_empty_elements(html)
        return [] if _is_blank(html_to_plain(piece)) else [piece]
    return split_html(html, limit)


def html_to_plain(html: str) -> str:
    """Strip tags and unescape entities, for sending without a parse mode."""
    return unescape(re.sub(r"<[^<>]*>", "", html))


def split_plain(text: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """Split plain text into pieces of at most limit UTF-16 units."""
    _check_limit(limit)
    atoms = [_text_atom(g) for g in _graphemes(_normalize(text))]
    return [p for p in _pack(atoms, limit) if not _is_blank(p)]


def _is_blank(text: str) -> bool:
    """Tell whether Telegram would find no text at all in text."""
    return not text.strip(_BLANK).strip()


# ---------------------------------------------------------------------------
# Rendering: blocks


def _normalize(text: str) -> str:
    """Unify line endings and drop code points Telegram cannot carry."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    # A lone surrogate cannot be encoded as UTF-8, so the request would fail.
    return re.sub("[\ud800-\udfff]", "\ufffd", text)


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


# ---------------------------------------------------------------------------
# Rendering: inline


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


def _drop_empty_elements(html_text: str) -> str:
    """Remove elements with nothing inside, which carry no formatting."""
    count = 1
    while count:
        html_text, count = _EMPTY_ELEMENT.subn("", html_text)
    return html_text


# ---------------------------------------------------------------------------
# Splitting


def _check_limit(limit: int) -> None:
    """Reject limits too small to hold every indivisible unit."""
    if limit < _MIN_LIMIT:
        raise ValueError(f"limit must be at least {_MIN_LIMIT}, got {limit}")


def _utf16_len(text: str) -> int:
    """Return the length of text in UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _text_atom(src: str) -> _Atom:
    """Make an atom of visible text."""
    return _Atom(_TEXT, src, "", _utf16_len(src))


def _html_atoms(html_text: str) -> list[_Atom]:
    """Tokenize HTML into tags, entities and grapheme clusters."""
    atoms: list[_Atom] = []
    for token in _HTML_TOKEN.findall(html_text):
        tag = _TAG.match(token) if token.endswith(">") else None
        if tag:
            kind = _CLOSE if tag[1] else _OPEN
            atoms.append(_Atom(kind, token, tag[2].lower(), _utf16_len(token)))
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
    if _utf16_len(cluster + ch) > _MAX_CLUSTER_UNITS:
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
    length = _utf16_len(_opening(stack))
    close_cost = _utf16_len(_closing(stack))
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
            cost, new_close = _utf16_len(src), _utf16_len(_closing(new_stack))
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
