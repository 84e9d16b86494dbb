"""Content blocks as the Messages API shapes them, seen as text: for tokens and transcripts."""

import json
from typing import Any

from bot.conversations.file_refs import file_ref, is_file_block
from memory.search_terms import index_text
from memory.tokens import count_tokens


def block_text(block: dict[str, Any]) -> str:
    """Return a content block as plain text: a text, a tool call, a tool result or a file."""
    kind = block.get("type")
    if kind == "text":
        return block.get("text", "")
    if kind == "tool_use":
        return f"[called {block.get('name')} {json.dumps(block.get('input'), ensure_ascii=False)}]"
    if kind == "tool_result":
        return f"[tool result: {block.get('content')}]"
    if is_file_block(block):
        return file_ref(block).label
    return ""


def content_tokens(content: list[dict[str, Any]]) -> int:
    """Count the tokens of a turn: its text, tool calls and results, and its files' estimates."""
    text = count_tokens("\n".join(block_text(block) for block in content))
    return text + sum(file_ref(block).tokens for block in content if is_file_block(block))


def is_tool_result(content: list[dict[str, Any]]) -> bool:
    """Tell whether a user turn carries tool results rather than the user's own words."""
    return any(block.get("type") == "tool_result" for block in content)


def turn_words(role: str, content: list[dict[str, Any]]) -> str:
    """Return what a turn said in words, without the time line a user's turn opens with."""
    texts = [block.get("text", "") for block in content if block.get("type") == "text"]
    if role == "user" and texts:
        texts[0] = texts[0].partition("\n")[2]
    return " ".join(texts)


def search_text(role: str, content: list[dict[str, Any]], owner_id: int) -> str | None:
    """Return a turn's words as the conversation index holds them, or None if it has none."""
    return index_text(turn_words(role, content), owner_id) or None
