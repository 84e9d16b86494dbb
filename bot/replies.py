"""Deliver text to a chat: HTML in pieces under Telegram's limit, plain text if refused."""

import logging

from telegram import Bot, Message
from telegram.constants import ParseMode
from telegram.error import BadRequest

from bot.telegram_text import html_to_plain, render_reply, split_html, split_plain

logger = logging.getLogger(__name__)


async def _send_piece(bot: Bot, chat_id: int, html: str, **kwargs) -> Message:
    """Send one HTML piece, falling back to plain text if Telegram cannot parse it."""
    try:
        return await bot.send_message(chat_id, html, parse_mode=ParseMode.HTML, **kwargs)
    except BadRequest as error:
        if "can't parse entities" not in str(error).lower():
            raise
        logger.warning("Telegram refused our HTML (%s); sending plain text", error)
    last = None
    for plain in split_plain(html_to_plain(html)):
        last = await bot.send_message(chat_id, plain, **kwargs)
    assert last is not None
    return last


async def send_html(bot: Bot, chat_id: int, html: str, **kwargs) -> list[Message]:
    """Send text we wrote as HTML, split to fit."""
    return [await _send_piece(bot, chat_id, piece, **kwargs) for piece in split_html(html)]


async def send_markdown(bot: Bot, chat_id: int, markdown: str, **kwargs) -> list[Message]:
    """Send the model's Markdown reply rendered for Telegram, split to fit."""
    return [await _send_piece(bot, chat_id, piece, **kwargs) for piece in render_reply(markdown)]
