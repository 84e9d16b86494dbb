"""Builders the tests share: a SQLite URL, a user's message as Telegram sends it, a request's parts.

Light on purpose (no bot Application is imported), so conftest and any test can use them.
"""

import itertools
import time
from pathlib import Path
from typing import Any

OWNER = 111  # the allowed user of tests/harness.py
_MESSAGE_IDS = itertools.count(500_000)


def sqlite_url(path: Path) -> str:
    """Return the async URL of a SQLite file, as DATABASE_URL takes it."""
    return f"sqlite+aiosqlite:///{path}"


def private_message(chat_id: int, **fields: Any) -> dict[str, Any]:
    """Return a Bot API Message from OWNER in a private chat, with extra fields (text, ...)."""
    return {
        "message_id": next(_MESSAGE_IDS),
        "from": {"id": OWNER, "is_bot": False, "first_name": "Alice"},
        "chat": {"id": chat_id, "type": "private", "first_name": "Alice"},
        "date": int(time.time()),
        **fields,
    }


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the tool_result blocks of a Messages request's newest message."""
    return [b for b in request["messages"][-1]["content"] if b.get("type") == "tool_result"]
