"""Telegram handlers for chat and the simple commands: read the update, call a service, reply."""

import logging

from telegram import Update
from telegram.constants import ChatType
from telegram.error import TelegramError

from bot.conversations.snapshot import DuplicateUpdate
from bot.telegram import texts
from bot.telegram.context import BotContext, owner_id
from bot.telegram.delivery import deliver_answer, send_html

logger = logging.getLogger(__name__)


async def start(update: Update, context: BotContext) -> None:
    """Greet the user and say what the bot does."""
    await send_html(context.bot, update.effective_chat.id, texts.START)


async def help_command(update: Update, context: BotContext) -> None:
    """Explain the commands and how memory works."""
    await send_html(context.bot, update.effective_chat.id, texts.HELP)


async def new_conversation(update: Update, context: BotContext) -> None:
    """End the current conversation."""
    await context.services.conversations.end(update.effective_chat.id)
    await send_html(context.bot, update.effective_chat.id, texts.NEW_CONVERSATION)


async def chat_message(update: Update, context: BotContext) -> None:
    """Answer a text message through the agent."""
    chat = update.effective_chat
    sender = update.effective_user.full_name if chat.type != ChatType.PRIVATE else None
    answer = context.services.chat.answer_message(
        chat.id, owner_id(update), update.effective_message.text, sender, update.update_id
    )
    try:
        await deliver_answer(context.bot, chat.id, answer)
    except DuplicateUpdate:
        logger.info("update %s was already handled; not answering twice", update.update_id)


async def unsupported_message(update: Update, context: BotContext) -> None:
    """Say politely that only text is understood."""
    await send_html(context.bot, update.effective_chat.id, texts.NOT_TEXT)


async def error_handler(update: object, context: BotContext) -> None:
    """Log any error a handler did not handle, and tell the user something went wrong."""
    logger.error("unhandled error while processing an update", exc_info=context.error)
    if isinstance(update, Update) and update.effective_chat is not None:
        try:
            await context.bot.send_message(update.effective_chat.id, texts.SOMETHING_WENT_WRONG)
        except TelegramError:  # the chat may be unreachable; the error is logged above
            logger.debug("could not report the error to the chat", exc_info=True)
