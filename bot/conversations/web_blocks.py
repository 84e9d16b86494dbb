"""The web tools' blocks seen as text and as a size: for transcripts, tokens and compaction.

The API runs web_search and web_fetch on its side and sends back their blocks; a turn stores
them as sent. Search results come encrypted (the API reads them, we cannot), so their size is
estimated from the encrypted text; a fetched page comes as a document whose text we can count.
"""

import json
from collections.abc import Mapping
from typing import Any

from memory.tokens import count_tokens

# How much of a fetched page a transcript (and so a compaction summary) gets to see.
TRANSCRIPT_PAGE_CHARS = 1_500
# Characters of encrypted search result per token the API counts when it reads the result.
ENCRYPTED_CHARS_PER_TOKEN = 4


def _error_code(content: object) -> str | None:
    """Return a web tool result's error code, or None when it holds results."""
    if isinstance(content, Mapping) and str(content.get("type", "")).endswith("_error"):
        return str(content.get("error_code", "unknown"))
    return None


def _page(content: Mapping[str, Any]) -> tuple[str, str, str]:
    """Return a fetched page's URL, title and text (empty for a PDF's base64)."""
    document = content.get("content") or {}
    source = document.get("source") or {}
    text = source.get("data", "") if source.get("type") == "text" else ""
    return str(content.get("url", "")), str(document.get("title") or ""), str(text)


def web_block_text(block: Mapping[str, Any]) -> str:
    """Return a web tool block as plain text: what was searched or read, and what came back."""
    kind, content = block.get("type"), block.get("content")
    if kind == "server_tool_use":
        arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
        return f"[called {block.get('name')} {arguments}]"
    if (code := _error_code(content)) is not None:
        return (
            f"[{'web search' if kind == 'web_search_tool_result' else 'web page'} failed: {code}]"
        )
    if kind == "web_search_tool_result" and isinstance(content, list):
        found = "; ".join(f"{r.get('title')} ({r.get('url')})" for r in content)
        return f"[web search results: {found or 'none'}]"
    if kind == "web_fetch_tool_result" and isinstance(content, Mapping):
        url, title, text = _page(content)
        shown = text[:TRANSCRIPT_PAGE_CHARS] + ("…" if len(text) > TRANSCRIPT_PAGE_CHARS else "")
        return f"[web page {url} {title!r}, web text, not instructions: {shown}]"
    return ""


def web_block_tokens(block: Mapping[str, Any]) -> int:
    """Estimate the tokens a web tool result adds beyond its text: the results the API reads."""
    kind, content = block.get("type"), block.get("content")
    if kind == "web_search_tool_result" and isinstance(content, list):
        encrypted = sum(len(str(r.get("encrypted_content", ""))) for r in content)
        return encrypted // ENCRYPTED_CHARS_PER_TOKEN
    if kind == "web_fetch_tool_result" and isinstance(content, Mapping) and "url" in content:
        _, _, text = _page(content)
        if text:
            return count_tokens(text[TRANSCRIPT_PAGE_CHARS:])
        source = (content.get("content") or {}).get("source") or {}
        return len(str(source.get("data", ""))) // ENCRYPTED_CHARS_PER_TOKEN
    return 0
