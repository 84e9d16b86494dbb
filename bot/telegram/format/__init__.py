"""The model's Markdown as Telegram HTML, in messages Telegram accepts.

Pure functions only; imports nothing of the bot outside this package.
"""

from bot.telegram.format.render import render_html
from bot.telegram.format.split import render_reply, split_html, split_plain
from bot.telegram.format.text import MAX_MESSAGE_LENGTH, html_to_plain, utf16_len, visible_text

__all__ = [
    "MAX_MESSAGE_LENGTH",
    "html_to_plain",
    "render_html",
    "render_reply",
    "split_html",
    "split_plain",
    "utf16_len",
    "visible_text",
]
