"""Content blocks as the Messages API shapes them, seen as text: for tokens and transcripts."""

import json
from collections.abc import Sequence
from datetime import datetime

from bot.conversations.blocks import WEB_BLOCK_TYPES, Block, Role
from bot.conversations.file_refs import file_ref
from bot.conversations.said_by import SaidBy, said_by_of
from bot.conversations.voice_refs import voice_ref
from bot.conversations.web_blocks import web_block_text, web_block_tokens
from memory.search_terms import index_text
from memory.tokens import count_tokens

# A turn's month is indexed by its English name (locale-free).
MONTHS = (
    "January February March April May June July August September October November December"
).split()


def block_text(block: Block) -> str:
    """Return a content block as plain text: text, a tool call or result, a file, a voice note."""
    if block["type"] == "text":
        return block["text"]
    if block["type"] == "tool_use":
        return f"[called {block['name']} {json.dumps(block['input'], ensure_ascii=False)}]"
    if block["type"] == "tool_result":
        return f"[tool result: {result_text(block.get('content', ''))}]"
    if block["type"] == "file":
        return file_ref(block).label
    if block["type"] == "voice":
        return voice_ref(block).label
    if block["type"] in WEB_BLOCK_TYPES:
        return web_block_text(block)
    return ""  # a block of a kind this version does not know: it has no words for us


def result_text(content: object) -> str:
    """Return a tool result's content as text: its texts, and a line per search result."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content if isinstance(content, list) else ():
        if part.get("type") == "text":
            parts.append(part["text"])
        elif part.get("type") == "search_result":
            words = " ".join(text["text"] for text in part["content"])
            parts.append(f"- {part['title']}: {words}")
    return "\n".join(parts)


def content_tokens(content: Sequence[Block]) -> int:
    """Count the tokens of a turn: its text, tool calls and results, files' and web estimates."""
    text = count_tokens("\n".join(block_text(block) for block in content))
    web = sum(web_block_tokens(b) for b in content if b["type"] in WEB_BLOCK_TYPES)
    return text + web + sum(file_ref(b).tokens for b in content if b["type"] == "file")


def is_tool_result(content: Sequence[Block]) -> bool:
    """Tell whether a user turn carries tool results rather than the user's own words."""
    return any(block["type"] == "tool_result" for block in content)


def turn_words(role: Role, content: Sequence[Block]) -> str:
    """Return what a turn said in words, without the time line a user's turn opens with."""
    texts = [block["text"] for block in content if block["type"] == "text"]
    if role == "user" and texts:
        texts[0] = texts[0].partition("\n")[2]
    return " ".join(texts)


def date_words(at: datetime) -> str:
    """Return the words a turn's date is found by: its month's name and year ("May 2023")."""
    return f"{MONTHS[at.month - 1]} {at.year}"


def searched_words(
    role: Role,
    content: Sequence[Block],
    said_by: SaidBy | None = None,
    said_at: datetime | None = None,
) -> str:
    """Return what a turn is found by: who said it, its words, the names of its files.

    With said_at (from migration 0021 on), also its month and year, and "assistant" for
    the bot's words (a user's are found by the speaker's name in a group).
    """
    said_by = said_by_of(said_by.stored() if said_by else None, list(content))
    names = [said_by.speaker, said_by.forwarded_from] if role == "user" else []
    files = [str(block.get("name", "")) for block in content if block["type"] == "file"]
    words = turn_words(role, content)
    dated = [] if said_at is None or not (words or files) else [date_words(said_at)]
    if said_at is not None and role == "assistant" and words:
        names.append("assistant")
    return " ".join(part for part in [*names, words, *files, *dated] if part)


def search_text(
    role: Role,
    content: Sequence[Block],
    owner_id: int,
    said_by: SaidBy | None = None,
    said_at: datetime | None = None,
) -> str | None:
    """Return a turn's words as the conversation index holds them, or None if it has none."""
    return index_text(searched_words(role, content, said_by, said_at), owner_id) or None
