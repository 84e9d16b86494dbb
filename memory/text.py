"""Text fit to store: no control characters but tab and newline, no lone surrogates; cut to fit.

Postgres refuses NUL in text, UTF-8 cannot encode a lone surrogate, and none of them means
anything in a chat or a memory.
"""

import re

UNSTORABLE = re.compile("[\x00-\x08\x0b-\x1f\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Return text fit to store: line breaks as newlines, no other control characters."""
    return UNSTORABLE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def shorten(text: str, limit: int) -> str:
    """Return text cut to limit characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def storable(text: str) -> str:
    """Return text unchanged if it is fit to store, else raise ValueError saying why."""
    if UNSTORABLE.search(text):
        raise ValueError("must be plain text, without control characters such as NUL")
    return text
