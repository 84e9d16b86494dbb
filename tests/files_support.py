"""What the file tests share: messages with files as Telegram sends them, and what to look at."""

import itertools
import time
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.conversations.blocks import Content
from bot.conversations.models import Turn
from tests.harness import OWNER

MB = 1024 * 1024
_MESSAGE_IDS = itertools.count(700_000)


def push_document_fields(
    tg, fields: dict[str, Any], *, caption: str | None = None, user_id: int = OWNER
) -> dict[str, Any]:
    """Queue a private message whose document is given by its fields (file_size may be absent)."""
    message = {
        "message_id": next(_MESSAGE_IDS),
        "from": {"id": user_id, "is_bot": False, "first_name": "Alice"},
        "chat": {"id": user_id, "type": "private", "first_name": "Alice"},
        "date": int(time.time()),
        "document": fields,
    }
    if caption:
        message["caption"] = caption
    return tg.push_update({"message": message})


def push_album_photo(tg, chat_id: int, data: bytes, album: str, **kwargs: Any) -> dict[str, Any]:
    """Queue one photo of an album (media group), as Telegram sends each as its own message."""
    update = tg.push_photo(chat_id, data, **kwargs)
    # No await since the push: the bot cannot have fetched the update yet.
    update["message"]["media_group_id"] = album
    return update


def calls_to(tg, method: str) -> list[dict[str, Any]]:
    """Return the params of every call of a Bot API method."""
    return [params for name, params in tg.calls if name.lower() == method.lower()]


async def stored_contents(engine: AsyncEngine) -> list[Content]:
    """Return every stored turn's content, oldest first."""
    async with engine.connect() as connection:
        rows = await connection.execute(select(Turn.content).order_by(Turn.id))
        return [row[0] for row in rows]


def user_texts(request: dict[str, Any]) -> str:
    """Return all text of a request's user messages."""
    return "\n".join(
        block.get("text", "")
        for message in request["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text"
    )


def without_cache_control(value: Any) -> Any:
    """Return a copy of request content without cache_control markers."""
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value
