"""Telegram's HTML parse mode: parse text into (plain text, entities) or refuse it as tdlib does.

The parser follows tdlib's ``parse_html`` closely, including its error wordings and its byte
offsets, so a reply the fake accepts would not be refused with "can't parse entities".
"""

from __future__ import annotations

import re
from typing import Any

# tdlib's notion of whitespace, used for tag parsing and for trimming message text.
_SPACE = " \t\r\n\v\f\0"
MAX_MESSAGE_LENGTH = 4096
MAX_CAPTION_LENGTH = 1024

_TAG_TYPES = {
    "b": "bold", "strong": "bold", "i": "italic", "em": "italic",
    "u": "underline", "ins": "underline", "s": "strikethrough", "strike": "strikethrough",
    "del": "strikethrough", "span": "spoiler", "tg-spoiler": "spoiler", "a": "text_link",
    "code": "code", "pre": "pre", "blockquote": "blockquote", "tg-emoji": "custom_emoji",
    "tg-time": "date_time",
}  # fmt: skip

_ENTITY_RE = re.compile(r"&(?:#([0-9]{1,8})|#[xX]([0-9a-fA-F]{1,8})|([a-zA-Z][a-zA-Z0-9]*));")
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_NAME_TOKEN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")


class HTMLParseError(ValueError):
    """Raised for HTML that Telegram would refuse with "can't parse entities"."""


def utf16_len(text: str) -> int:
    """Return the length of text in UTF-16 code units, the unit Telegram counts in."""
    return len(text.encode("utf-16-le")) // 2


def _byte_offset(html: str, pos: int) -> int:
    return len(html[:pos].encode("utf-8"))


def _decode_entity(html: str, pos: int) -> tuple[str, int]:
    """Decode the HTML entity starting at pos; return the character and the next position."""
    match = _ENTITY_RE.match(html, pos)
    if match is None:
        raise HTMLParseError(
            f'Character "&" must be escaped as "&amp;" at byte offset {_byte_offset(html, pos)}'
        )
    decimal, hexadecimal, name = match.groups()
    if name is not None:
        if name not in _NAMED_ENTITIES:
            raise HTMLParseError(
                f'Unsupported HTML entity "{match.group()}" at byte offset '
                f"{_byte_offset(html, pos)}"
            )
        return _NAMED_ENTITIES[name], match.end()
    code = int(decimal) if decimal is not None else int(hexadecimal, 16)
    if not 0 < code <= 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise HTMLParseError(
            f'Invalid character reference "{match.group()}" at byte offset '
            f"{_byte_offset(html, pos)}"
        )
    return chr(code), match.end()


def _parse_start_tag(html: str, begin: int) -> tuple[str, dict[str, str], int]:
    """Parse the start tag at begin the way tdlib does; return name, attributes, next pos."""
    n = len(html)

    def unclosed() -> HTMLParseError:
        return HTMLParseError(f"Unclosed start tag at byte offset {_byte_offset(html, begin)}")

    i = begin + 1
    while i < n and html[i] not in _SPACE and html[i] != ">":
        i += 1
    name = html[begin + 1 : i].lower()
    if i >= n:
        raise unclosed()
    if name not in _TAG_TYPES:
        raise HTMLParseError(
            f'Unsupported start tag "{name}" at byte offset {_byte_offset(html, begin)}'
        )
    attrs: dict[str, str] = {}
    while True:
        while i < n and html[i] in _SPACE:
            i += 1
        if i >= n:
            raise unclosed()
        if html[i] == ">":
            return name, attrs, i + 1
        start = i
        while i < n and html[i] not in _SPACE and html[i] not in "=>":
            i += 1
        attr = html[start:i].lower()
        if not attr:
            raise HTMLParseError(
                f'Empty attribute name in the tag "{name}" at byte offset '
                f"{_byte_offset(html, begin)}"
            )
        while i < n and html[i] in _SPACE:
            i += 1
        if i >= n:
            raise unclosed()
        if html[i] != "=":
            # Only <blockquote expandable> has a value-less attribute.
            if name != "blockquote" or attr != "expandable":
                raise HTMLParseError(
                    f'Expected equal sign in declaration of an attribute of the tag "{name}" '
                    f"at byte offset {_byte_offset(html, begin)}"
                )
            attrs[attr] = ""
            continue
        i += 1
        while i < n and html[i] in _SPACE:
            i += 1
        if i >= n:
            raise unclosed()
        if html[i] in "\"'":
            quote, i, chars = html[i], i + 1, []
            while i < n and html[i] != quote:
                if html[i] == "&":
                    char, i = _decode_entity(html, i)
                else:
                    char, i = html[i], i + 1
                chars.append(char)
            if i >= n:
                raise unclosed()
            value, i = "".join(chars), i + 1
        else:
            start = i
            while i < n and html[i] in _NAME_TOKEN:
                i += 1
            value = html[start:i].lower()
            if i >= n:
                raise unclosed()
            if html[i] not in _SPACE and html[i] != ">":
                raise HTMLParseError(
                    f"Unexpected end of name token at byte offset {_byte_offset(html, start)}"
                )
        attrs[attr] = value


def _open_entity(name: str, attrs: dict[str, str], html: str, begin: int) -> dict[str, Any]:
    """Return the entity (without offset/length) that a start tag opens."""
    entity: dict[str, Any] = {"type": _TAG_TYPES[name]}
    where = f"at byte offset {_byte_offset(html, begin)}"
    if name == "span" and attrs.get("class") != "tg-spoiler":
        raise HTMLParseError(f'Tag "span" must have class "tg-spoiler" {where}')
    if name == "a":
        entity["url"] = attrs.get("href", "")
    elif name == "code" and attrs.get("class", "").startswith("language-"):
        entity["language"] = attrs["class"][len("language-") :]
    elif name == "blockquote" and "expandable" in attrs:
        entity["type"] = "expandable_blockquote"
    elif name == "tg-emoji":
        if not attrs.get("emoji-id", "").isdigit():
            raise HTMLParseError(f'Tag "tg-emoji" must have a numeric "emoji-id" {where}')
        entity["custom_emoji_id"] = attrs["emoji-id"]
    elif name == "tg-time":
        if not attrs.get("unix", "").isdigit():
            raise HTMLParseError(f'Tag "tg-time" must have a numeric "unix" attribute {where}')
        entity["unix_time"] = int(attrs["unix"])
        if attrs.get("format"):
            entity["date_time_format"] = attrs["format"]
    return entity


def parse_html(html: str) -> tuple[str, list[dict[str, Any]]]:
    """Parse Telegram-style HTML into (plain text, entities); raise HTMLParseError if invalid.

    Stricter than Telegram on one point: a "&" that does not start a supported entity is an
    error here, whereas tdlib keeps it literally. The Bot API docs require escaping it.
    """
    out: list[str] = []
    u16 = 0
    stack: list[tuple[str, dict[str, Any], int]] = []  # (tag name, entity, start offset)
    entities: list[dict[str, Any]] = []
    i, n = 0, len(html)
    while i < n:
        char = html[i]
        if char == "&":
            char, i = _decode_entity(html, i)
        elif char == "<" and html.startswith("</", i):
            begin = i
            if not stack:
                raise HTMLParseError(f"Unexpected end tag at byte offset {_byte_offset(html, i)}")
            i += 2
            while i < n and html[i] not in _SPACE and html[i] != ">":
                i += 1
            end_name = html[begin + 2 : i].lower()
            while i < n and html[i] in _SPACE:
                i += 1
            if i >= n or html[i] != ">":
                raise HTMLParseError(f"Unclosed end tag at byte offset {_byte_offset(html, begin)}")
            i += 1
            name, entity, start = stack.pop()
            if end_name and end_name != name:
                raise HTMLParseError(
                    f"Unmatched end tag at byte offset {_byte_offset(html, begin)}, "
                    f'expected "</{name}>", found "</{end_name}>"'
                )
            _close_entity(entities, name, entity, start, u16)
            continue
        elif char == "<":
            begin = i
            name, attrs, i = _parse_start_tag(html, i)
            stack.append((name, _open_entity(name, attrs, html, begin), u16))
            continue
        else:
            # A bare ">" is accepted as text, exactly as Telegram does.
            i += 1
        out.append(char)
        u16 += utf16_len(char)
    if stack:
        raise HTMLParseError(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _close_entity(
    entities: list[dict[str, Any]], name: str, entity: dict[str, Any], start: int, end: int
) -> None:
    """Append the finished entity; empty entities and links without href are dropped."""
    if end <= start or (name == "a" and not entity["url"]):
        return
    entity.update(offset=start, length=end - start)
    # <pre><code class="language-x">...</code></pre> is one pre entity carrying the language.
    if name == "pre" and entities:
        inner = entities[-1]
        if inner["type"] == "code" and (inner["offset"], inner["length"]) == (start, end - start):
            entities.pop()
            if "language" in inner:
                entity["language"] = inner["language"]
    entities.append(entity)


def strip_text(text: str, entities: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Trim surrounding whitespace like Telegram does, shifting and clipping entities."""
    stripped = text.strip(_SPACE)
    shift = utf16_len(text[: len(text) - len(text.lstrip(_SPACE))])
    total = utf16_len(stripped)
    kept = []
    for entity in entities:
        start = max(entity["offset"] - shift, 0)
        end = min(entity["offset"] + entity["length"] - shift, total)
        if end > start:
            kept.append({**entity, "offset": start, "length": end - start})
    return stripped, kept


# Telegram's documented nesting rules: styles may contain and sit inside anything but pre and
# code; a blockquote may not hold another; all other entities may not contain each other.
_STYLES = frozenset({"bold", "italic", "underline", "strikethrough", "spoiler"})
_CODE = frozenset({"code", "pre"})
_QUOTES = frozenset({"blockquote", "expandable_blockquote"})
_LINK_SCHEMES = ("http://", "https://", "tg://", "mailto:")


def _contains(outer: dict[str, Any], inner: dict[str, Any]) -> bool:
    """Tell whether inner lies within outer."""
    return (
        outer["offset"] <= inner["offset"]
        and inner["offset"] + inner["length"] <= outer["offset"] + outer["length"]
    )


def _nesting_forbidden(outer: str, inner: str) -> bool:
    """Tell whether Telegram drops an inner entity of this type inside an outer one."""
    if outer in _CODE or (inner in _CODE and outer not in _QUOTES):
        return True
    if outer in _QUOTES:
        return inner in _QUOTES
    return outer not in _STYLES and inner not in _STYLES


def mangled(entities: list[dict[str, Any]]) -> list[str]:
    """Return what Telegram would silently drop from parsed entities, as sentences."""
    problems = [
        f"{inner['type']} inside {outer['type']} at {inner['offset']}"
        for i, outer in enumerate(entities)
        for j, inner in enumerate(entities)
        # Of two entities on the same span, the one opened first (closed, so listed, last)
        # is the outer one.
        if i != j and _contains(outer, inner) and not (i < j and _contains(inner, outer))
        and _nesting_forbidden(outer["type"], inner["type"])
    ]  # fmt: skip
    problems += [
        f"link to {entity['url']!r} at {entity['offset']}"
        for entity in entities
        if entity["type"] == "text_link" and not entity["url"].startswith(_LINK_SCHEMES)
    ]
    return problems
