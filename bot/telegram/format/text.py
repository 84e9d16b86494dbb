"""Telegram's measure of text, and what it treats as nothing: shared by rendering and splitting."""

import re
import unicodedata
from html import unescape

MAX_MESSAGE_LENGTH = 4096

_SURROGATE = re.compile("[\ud800-\udfff]")
_TOKEN = re.compile(r"<[^<>]*>|[^<]+|<")
_DROPPABLE_START = re.compile(r"<(b|i|s|u|a|code|pre|blockquote)(?: [^<>]*)?>")
_EMPTY_ELEMENT = re.compile(r"<(b|i|s|u|a|code|pre|blockquote)(?: [^<>]*)?></\1>")

# What Telegram treats as nothing at all (TDLib's clean_input_string and
# strip_empty_characters): a message of only these is rejected as empty.
_BLANK = "".join(
    [chr(c) for c in range(0x21)]
    + [chr(c) for c in range(0x2000, 0x2010)]
    + [chr(c) for c in range(0x2028, 0x2030)]
    + [chr(c) for c in range(0xE0000, 0xE0080)]
    + list("\u00a0\u030a\u0333\u033f\u1680\u180e\u205f\u2800\u3000\ufeff\ufffc")
)


# Joiners shape letters (Persian, Indic scripts) and emoji sequences; they cannot reorder text.
_JOINERS = frozenset("\u200c\u200d")


def visible_text(text: str) -> str:
    """Return text from elsewhere without invisible format characters, bidi controls first.

    Bidi overrides, embeddings, isolates and marks (U+202A-202E, U+2066-2069, U+200E/F,
    U+061C) make text read otherwise than it is ("gpj.exe" shown as "exe.jpg"), and the other
    format characters (Unicode Cf: zero-width spaces, tags, a BOM) hide what is there. Every
    remote text shown in a chat (a web page's title, a file's name, a transcript) goes
    through here.
    """
    if text.isascii():
        return text  # no format character is ASCII
    return "".join(ch for ch in text if ch in _JOINERS or unicodedata.category(ch) != "Cf")


def utf16_len(text: str) -> int:
    """Return the length of text in UTF-16 code units, as Telegram measures messages."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def is_blank(text: str) -> bool:
    """Tell whether Telegram would find no text at all in text."""
    return not text.strip(_BLANK).strip()


def normalize(text: str) -> str:
    """Unify line endings and drop code points Telegram cannot carry."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    if text.isascii():
        return text  # found at memory speed; the pattern below looks at each character
    # A lone surrogate cannot be encoded as UTF-8, so the request would fail.
    return _SURROGATE.sub("\ufffd", text)


def drop_empty_elements(html_text: str) -> str:
    """Remove elements with nothing inside, which carry no formatting."""
    if not _EMPTY_ELEMENT.search(html_text):
        return html_text  # the usual case, found without a step per tag
    # One pass with a stack: an end tag right after its own start tag takes both away, which
    # may leave the element around them empty in turn, as in <b><i></i></b>.
    kept: list[str] = []
    for token in _TOKEN.findall(html_text):
        if kept and token.startswith("</") and _starts(kept[-1], token[2:-1]):
            kept.pop()
        else:
            kept.append(token)
    return "".join(kept)


def _starts(token: str, name: str) -> bool:
    """Tell whether token is the start tag of an element named name that may be dropped."""
    start = _DROPPABLE_START.fullmatch(token)
    return start is not None and start[1] == name


def escape_html(text: str) -> str:
    """Escape text for Telegram HTML."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_attr(text: str) -> str:
    """Escape text for a double-quoted Telegram HTML attribute."""
    return escape_html(text).replace('"', "&quot;")


def html_to_plain(html: str) -> str:
    """Strip tags and unescape entities, for sending without a parse mode."""
    return unescape(re.sub(r"<[^<>]*>", "", html))
