"""Show "typing…" in a chat while the model works, until a draft of the reply shows instead."""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from telegram import Bot
from telegram.constants import ChatAction
from telegram.error import TelegramError

from bot.conversations.snapshot import ChatThread

logger = logging.getLogger(__name__)

# Telegram shows a chat action for about five seconds.
REFRESH_SECONDS = 4.5
# A reply quicker than this needs no indicator; it would only flicker and cost an API call.
FIRST_DELAY_SECONDS = 0.25


async def _keep_typing(bot: Bot, place: ChatThread, until: asyncio.Event) -> None:
    """Send the typing action after a short delay, then keep it on until cancelled or until."""
    await asyncio.sleep(FIRST_DELAY_SECONDS)
    while not until.is_set():
        try:
            await bot.send_chat_action(
                place.chat_id, ChatAction.TYPING, message_thread_id=place.thread_id
            )
        except TelegramError as error:
            logger.debug("typing indicator failed: %s", error)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(REFRESH_SECONDS):
                await until.wait()


@contextlib.asynccontextmanager
async def typing_indicator(
    bot: Bot, place: ChatThread, until: asyncio.Event | None = None
) -> AsyncIterator[None]:
    """Keep the chat's typing indicator on for the duration of the block, or until it is set."""
    task = asyncio.create_task(_keep_typing(bot, place, until or asyncio.Event()))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
