"""Press inline buttons of the bot's messages like a Telegram client, and read them back."""

import itertools
from typing import Any

_query_ids = itertools.count(1)


def sent_to(harness, chat_id: int, since: int = 0) -> list[dict[str, Any]]:
    """Return the bot's messages to a chat (as they are now, edits applied), oldest first."""
    records = [m for m in harness.tg.sent[since:] if m["chat_id"] == chat_id]
    return [harness.tg.message(chat_id, m["result"]["message_id"]) for m in records]


def last_to(harness, chat_id: int) -> dict[str, Any]:
    """Return the bot's newest message to a chat, as it is now."""
    return sent_to(harness, chat_id)[-1]


def buttons(message: dict[str, Any]) -> list[tuple[str, str]]:
    """Return (label, callback data) of every button of a message, row by row."""
    rows = (message.get("reply_markup") or {}).get("inline_keyboard", [])
    return [(b["text"], b["callback_data"]) for row in rows for b in row]


def button(message: dict[str, Any], label_start: str) -> str:
    """Return the callback data of the one button whose label starts with label_start."""
    [data] = [data for label, data in buttons(message) if label.startswith(label_start)]
    return data


async def press(
    harness,
    message: dict[str, Any],
    data: str,
    user_id: int | None = None,
    *,
    as_is=False,
    first_name: str = "Alice",
) -> list[str]:
    """Press a button of a message; return the texts the bot sent to that chat in answer."""
    # The query carries the message as the fake holds it now, or, with as_is, as given.
    chat_id = message["chat"]["id"]
    user_id = chat_id if user_id is None else user_id
    before = len(harness.tg.sent)
    harness.tg.push_update(
        {
            "callback_query": {
                "id": f"cq{next(_query_ids)}",
                "from": {"id": user_id, "is_bot": False, "first_name": first_name},
                "message": message if as_is else harness.tg.message(chat_id, message["message_id"]),
                "chat_instance": f"ci{chat_id}",
                "data": data,
            }
        }
    )
    await harness.idle()
    return [m["result"]["text"] for m in harness.tg.sent[before:] if m["chat_id"] == chat_id]


def last_answer(harness) -> dict[str, Any]:
    """Return the parameters of the newest answerCallbackQuery."""
    return harness.tg.callback_answers[-1]
