"""Which memories a reply drew on, exactly: the API's citations and the model's id markers.

Memories found by search_memory go to the model as search_result blocks with citations on;
the text it writes from them comes back carrying search_result_location citations whose
source names the memory. Memories of the block (system[1]) are cited by the model itself,
with a marker such as [[mem:Ab12Cd34]] after the sentence that uses one; the user never
sees a marker: it is cut from the text, from every draft too, and only recorded.

Text with citations comes back split into several text blocks (a cited part is a block of
its own), so the text of a response joins neighbouring text blocks as they are, and only the
groups between other blocks (tool calls) with a blank line.
"""

import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from anthropic.types import ContentBlock, SearchResultBlockParam

from memory.ids import ID_LENGTH, ID_REGEX

# A memory as a search result's source: what its citations name.
SOURCE_PREFIX = "memory:"
_SOURCE = re.compile(rf"{SOURCE_PREFIX}({ID_REGEX})")
MARKER_OPEN = "[[mem:"
MARKER_CLOSE = "]]"
_MARKER = rf"\[\[mem:({ID_REGEX})\]\]"
# A marker at the start of a line goes with the spaces after it, else with those before it.
_LINE_START_MARKER = re.compile(rf"(?m)^(?:{_MARKER}[ \t]*)+")
_MARKER_WITH_SPACE = re.compile(rf"[ \t]*{_MARKER}")
_ANY_MARKER = re.compile(_MARKER)
# The longest text a marker can be: no unfinished tail is held back for longer than this.
_MARKER_LENGTH = len(MARKER_OPEN) + ID_LENGTH + len(MARKER_CLOSE)


def source_of(memory_id: str) -> str:
    """Return the search result source that names a memory."""
    return f"{SOURCE_PREFIX}{memory_id}"


def search_result(memory_id: str, title: str, text: str) -> SearchResultBlockParam:
    """Return a memory as a search result the model can cite."""
    return {
        "type": "search_result",
        "source": source_of(memory_id),
        "title": title,
        "content": [{"type": "text", "text": text}],
        "citations": {"enabled": True},
    }


def without_markers(text: str) -> str:
    """Cut every complete marker from text, with the spaces that would be left over."""
    return _MARKER_WITH_SPACE.sub("", _LINE_START_MARKER.sub("", text))


def _unfinished_tail(text: str) -> int:
    """Return where a tail that may still become a marker starts, or len(text) if none."""
    window = max(0, len(text) - _MARKER_LENGTH)
    for start in range(window, len(text)):
        if text[start] == "[" and _could_become_marker(text[start:]):
            return start
    return len(text)


def _could_become_marker(tail: str) -> bool:
    """Tell whether more text could turn tail into a marker."""
    opened = MARKER_OPEN[: len(tail)]
    if len(tail) <= len(MARKER_OPEN):
        return tail == opened
    rest = tail[len(MARKER_OPEN) :]
    memory_id, closing = rest[:ID_LENGTH], rest[ID_LENGTH:]
    return (
        tail.startswith(MARKER_OPEN)
        and memory_id.isascii()
        and (memory_id.isalnum() or not memory_id)
        and MARKER_CLOSE.startswith(closing)
        and len(closing) < len(MARKER_CLOSE)
    )


def visible_so_far(text: str) -> str:
    """Return what a reply still being written may show: no marker, not even half of one.

    A tail that may still become a marker waits, and so do the spaces before it (or at the
    end), which the marker may take with it: what is shown stays the start of the final text.
    """
    shown = without_markers(text)
    return shown[: _unfinished_tail(shown)].rstrip(" \t")


def marker_ids(text: str) -> list[str]:
    """Return the memory ids the text's markers cite, in order."""
    return _ANY_MARKER.findall(text)


def text_groups(blocks: Iterable[Any]) -> list[str]:
    """Return the texts of a response's runs of neighbouring text blocks, each joined as is."""
    return [
        "".join(block.text for block in run)
        for is_text, run in itertools.groupby(blocks, key=lambda b: b.type == "text")
        if is_text
    ]


def joined_text(blocks: Iterable[Any]) -> str:
    """Join a response's text blocks: neighbours as they are, runs by a blank line."""
    return "\n\n".join(group for group in text_groups(blocks) if group.strip())


def visible_texts(blocks: Iterable[Any]) -> list[str]:
    """Return a response's runs of text as the user sees them: without markers, none blank."""
    shown = (without_markers(group) for group in text_groups(blocks))
    return [group for group in shown if group.strip()]


def cited_ids(content: Sequence[ContentBlock]) -> list[str]:
    """Return the memory ids a response cites: by search result, then by marker; no repeats."""
    found: list[str] = []
    for block in content:
        if block.type == "text":
            for citation in block.citations or ():
                if citation.type == "search_result_location":
                    if match := _SOURCE.fullmatch(citation.source):
                        found.append(match[1])
    # Markers are read from the joined text: the API may split one across text blocks.
    found += marker_ids(joined_text(content))
    return list(dict.fromkeys(found))
