"""Search result blocks and their citations, as the Messages API takes and returns them.

A request may carry `search_result` blocks (in a user message, or in a tool result's
content); with `citations: {"enabled": true}` the model's text may cite them. A cited part of
the answer is a text block of its own with `citations`, a list of `search_result_location`s
(source, title, cited_text, search_result_index counted over every search result of the
request in order, start/end_block_index into the result's content). Streamed, a cited
block's citations come as citations_delta events (anthropic_server's _block_deltas).
"""

from collections.abc import Sequence
from typing import Any

Block = dict[str, Any]


class CitationError(ValueError):
    """A request the real API would refuse for its search results or citations."""


def search_results(messages: Sequence[Block]) -> list[Block]:
    """Return every search_result block of the messages, in the order the API counts them."""
    found: list[Block] = []
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "search_result":
                found.append(block)
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                found += [b for b in block["content"] if b.get("type") == "search_result"]
    return found


def validate_search_results(messages: Sequence[Block]) -> None:
    """Raise CitationError for a search result or a citation the API would refuse."""
    for i, message in enumerate(messages):
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else ()):
            if block.get("type") == "search_result" and message.get("role") != "user":
                raise CitationError(
                    f"messages.{i}.content.{j}: search_result blocks can only be in user messages"
                )
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for k, part in enumerate(inner if isinstance(inner, list) else ()):
                _check_tool_result_part(f"messages.{i}.content.{j}.content.{k}", part)
    results = search_results(messages)
    for n, result in enumerate(results):
        _check_search_result(n, result)
    if len({_enabled(result) for result in results}) > 1:
        raise CitationError(
            "Citations must be enabled on all search results or on none of them."
        )  # the API's rule; this wording is ours
    for message in messages:
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            for block in message["content"]:
                for citation in block.get("citations") or () if block.get("type") == "text" else ():
                    _check_citation(citation, results)


_TOOL_RESULT_PARTS = ("text", "image", "search_result", "document", "tool_reference")


def _check_tool_result_part(where: str, part: Any) -> None:
    if not isinstance(part, dict) or part.get("type") not in _TOOL_RESULT_PARTS:
        kinds = "', '".join(_TOOL_RESULT_PARTS)
        raise CitationError(f"{where}.type: Input tag should be '{kinds}'")
    if part["type"] == "text" and not (isinstance(part.get("text"), str) and part["text"]):
        raise CitationError("messages: text content blocks must be non-empty")


def _enabled(result: Block) -> bool:
    return bool((result.get("citations") or {}).get("enabled", False))


def _check_search_result(n: int, result: Block) -> None:
    """Check one search_result block's fields as the API's schema does."""
    for name in ("source", "title"):
        if not isinstance(result.get(name), str):
            raise CitationError(f"search_result.{name}: Field required")
    content = result.get("content")
    if not isinstance(content, list) or not content:
        raise CitationError("search_result.content: List should have at least 1 item")
    for part in content:
        if not isinstance(part, dict) or part.get("type") != "text":
            raise CitationError("search_result.content: Input tag should be 'text'")
        if not isinstance(part.get("text"), str) or not part["text"]:
            raise CitationError("messages: text content blocks must be non-empty")
    citations = result.get("citations")
    if citations is not None and not (
        isinstance(citations, dict) and isinstance(citations.get("enabled"), bool)
    ):
        raise CitationError("search_result.citations.enabled: Input should be a valid boolean")
    if set(result) - {"type", "source", "title", "content", "citations", "cache_control"}:
        raise CitationError(f"search_result {n}: Extra inputs are not permitted")


def _check_citation(citation: Any, results: list[Block]) -> None:
    """Refuse a search_result_location sent back that names no search result of the request."""
    if not isinstance(citation, dict) or citation.get("type") != "search_result_location":
        return  # other kinds (documents, the web) are not this fake's to check
    index = citation.get("search_result_index")
    if not isinstance(index, int) or not 0 <= index < len(results):
        raise CitationError(f"Invalid search_result_index {index}: no such search result")
    if results[index].get("source") != citation.get("source"):
        raise CitationError(f"search_result_index {index} does not match the citation's source")


def cited(body: Block, source: str, text: str) -> Block:
    """Return a text block citing the request's search result with this source, as the API does.

    The whole result is cited (all its content blocks). A source the request does not carry,
    or carries with citations off, cannot be cited by the real model either: that fails.
    """
    results = search_results(body.get("messages") or [])
    indexes = [n for n, result in enumerate(results) if result.get("source") == source]
    assert indexes, f"no search result with source {source!r} in the request"
    index = indexes[-1]
    result = results[index]
    assert _enabled(result), f"citations are off for the search result {source!r}"
    citation = {
        "type": "search_result_location",
        "cited_text": "".join(part["text"] for part in result["content"]),
        "source": source,
        "title": result["title"],
        "search_result_index": index,
        "start_block_index": 0,
        "end_block_index": len(result["content"]),
    }
    return {"type": "text", "text": text, "citations": [citation]}


Part = str | tuple[str, str]  # plain text, or (text, the source it cites)


def citing_blocks(body: Block, parts: Sequence[Part]) -> list[Block]:
    """Return the text blocks of an answer: plain parts as they are, cited parts citing."""
    return [
        {"type": "text", "text": part} if isinstance(part, str) else cited(body, part[1], part[0])
        for part in parts
    ]


def without_citations(content: Sequence[Block]) -> list[Block]:
    """Return the content without its citations: cited_text counts as no output token."""
    return [{k: v for k, v in block.items() if k != "citations"} for block in content]
