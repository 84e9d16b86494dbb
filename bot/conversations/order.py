"""A chat's history in the order the user sent it, whichever process stored what first.

Two processes on one database (a deploy's overlap) each store the messages they receive once
they hold the chat's lease, so a later message may be stored before earlier ones. Each turn
keeps user_order: a user's message its Telegram order (the message's date, then its id in the
chat: ids restart when a group becomes a supergroup, dates never go back), and every other
turn the order of the exchange it belongs to (the model's turns that of the message they
answer). A history reads by user_order, then by id; only the exchange still being answered
stays last, as the API answers the newest message.
"""

from collections.abc import Sequence

from bot.conversations.content import is_tool_result
from bot.conversations.snapshot import MessageRef, StoredTurn

# Message ids below this fit beside the date in one 64-bit number until the year 2106.
MESSAGE_ID_SPAN = 2**31


def order_of(ref: MessageRef) -> int | None:
    """Return a user's message's place in the chat's order, or None if it has no message key."""
    if ref.message_key is None:
        return None
    # "chat:message id:date" (bot.telegram.chat.reading.message_key); a group's chat id is negative.
    _, message_id, date = ref.message_key.rsplit(":", 2)
    return int(date) * MESSAGE_ID_SPAN + int(message_id) % MESSAGE_ID_SPAN


def in_user_order(turns: Sequence[StoredTurn]) -> list[StoredTurn]:
    """Return turns read in the user's order, with the exchange still being answered last."""
    by_id = sorted(turns, key=lambda turn: turn.id)
    start = _unfinished_start(by_id)
    if start is None:
        return list(turns)
    unfinished = {turn.id for turn in by_id[start:]}
    return [turn for turn in turns if turn.id not in unfinished] + by_id[start:]


def _unfinished_start(by_id: Sequence[StoredTurn]) -> int | None:
    """Return where the newest exchange starts if the model has not finished it, else None."""
    if not by_id or _answered(by_id[-1]):
        return None
    index = len(by_id) - 1
    # Back over the user's messages, and through the tool calls whose results follow them.
    while index > 0:
        if _answered(by_id[index - 1]) and not is_tool_result(by_id[index].content):
            break
        index -= 1
    return index


def _answered(turn: StoredTurn) -> bool:
    """Tell whether a turn ends the model's answer: the model's, asking for no tool."""
    return turn.role == "assistant" and not any(b["type"] == "tool_use" for b in turn.content)
