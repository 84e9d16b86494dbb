"""Send text we wrote to a chat: HTML split to fit (plain if refused), the model's Markdown."""

import logging
from typing import TypedDict, Unpack

from telegram import Bot, InlineKeyboardMarkup, Message
from telegram.constants import ParseMode
from telegram.error import BadRequest, ChatMigrated, EndPointNotFound, InvalidToken

from bot.conversations.snapshot import ChatThread
from bot.telegram import native
from bot.telegram.format import html_to_plain, render_reply, split_html, split_plain
from bot.telegram.format.rich import rich_reply

logger = logging.getLogger(__name__)


class _Options(TypedDict, total=False):
    """What a sent piece carries besides its text: its forum topic and its buttons."""

    message_thread_id: int | None
    reply_markup: InlineKeyboardMarkup | None


async def _send_piece(bot: Bot, chat_id: int, html: str, **kwargs: Unpack[_Options]) -> Message:
    """Send one HTML piece, falling back to plain text if Telegram cannot parse it."""
    try:
        return await bot.send_message(chat_id, html, parse_mode=ParseMode.HTML, **kwargs)
    except ChatMigrated as moved:
        # The group became a supergroup; its memories follow when its update arrives.
        logger.info("chat %s moved to %s; sending there", chat_id, moved.new_chat_id)
        return await _send_piece(bot, moved.new_chat_id, html, **kwargs)
    except BadRequest as error:
        if "can't parse entities" not in str(error).lower():
            raise
        logger.warning("Telegram refused our HTML (%s); sending plain text", error)
    last = None
    plains = split_plain(html_to_plain(html))
    # Buttons go under the last piece only, as they would have under the HTML.
    above = _Options(message_thread_id=kwargs.get("message_thread_id"))
    for number, plain in enumerate(plains, 1):
        options = kwargs if number == len(plains) else above
        last = await bot.send_message(chat_id, plain, **options)
    assert last is not None
    return last


async def send_html(
    bot: Bot,
    chat_id: int,
    html: str,
    *,
    thread_id: int | None = None,
    reply_markup: InlineKeyboardMarkup | None = None,
) -> list[Message]:
    """Send text we wrote as HTML, split to fit, to the chat (and forum topic)."""
    options = _Options(message_thread_id=thread_id, reply_markup=reply_markup)
    return [await _send_piece(bot, chat_id, piece, **options) for piece in split_html(html)]


async def send_rich(
    bot: Bot, place: ChatThread, markdown: str, buttons: InlineKeyboardMarkup | None
) -> Message | None:
    """Send the Markdown as one Rich Message; None if Telegram refused it (sent as HTML then)."""
    try:
        return await native.send_rich_message(
            bot, place.chat_id, markdown, thread_id=place.thread_id, reply_markup=buttons
        )
    except (BadRequest, InvalidToken, EndPointNotFound) as error:
        # Past a limit counted differently, or a server before Bot API 10.1: today's HTML.
        logger.warning("Telegram refused a rich message (%s); sending HTML", error)
        return None


async def send_markdown(
    bot: Bot,
    place: ChatThread,
    markdown: str,
    buttons: InlineKeyboardMarkup | None = None,
    *,
    rich: bool = False,
) -> list[Message]:
    """Send the model's Markdown reply rendered for Telegram, split to fit; buttons go last.

    With rich, a reply with structure that fits one goes as a Rich Message instead.
    """
    if (
        rich
        and rich_reply(markdown)
        and (message := await send_rich(bot, place, markdown, buttons))
    ):
        return [message]
    pieces = render_reply(markdown)
    sent = []
    for number, piece in enumerate(pieces, 1):
        last = buttons if number == len(pieces) else None
        options = _Options(message_thread_id=place.thread_id, reply_markup=last)
        sent.append(await _send_piece(bot, place.chat_id, piece, **options))
    return sent
