"""Telegram handlers: read the update, call a service, reply."""

import logging
from collections.abc import Awaitable

from anthropic import APIError
from telegram import Update
from telegram.constants import ChatType
from telegram.ext import ApplicationHandlerStop

from bot import texts
from bot.agent import AgentReply
from bot.context import BotContext
from bot.conversations import DuplicateUpdate
from bot.filters import ADDRESSED_TO_BOT
from bot.memory_handlers import send_change_notice
from bot.owners import owner_id
from bot.replies import send_html, send_markdown
from bot.typing_indicator import typing_indicator

logger = logging.getLogger(__name__)


async def guard(update: Update, context: BotContext) -> None:
    """Stop anything not from an allowed user before it reaches the model or memory."""
    user = update.effective_user
    if user is not None and user.id in context.services.settings.allowed_user_ids:
        return
    if update.callback_query is not None:
        await update.callback_query.answer(texts.PRIVATE_BOT_ALERT, show_alert=True)
    elif user is not None and update.message is not None and ADDRESSED_TO_BOT.check_update(update):
        await send_html(context.bot, update.message.chat_id, texts.private_bot(user.id))
    raise ApplicationHandlerStop


async def start(update: Update, context: BotContext) -> None:
    """Greet the user and say what the bot does."""
    await send_html(context.bot, update.effective_chat.id, texts.START)


async def help_command(update: Update, context: BotContext) -> None:
    """Explain the commands and how memory works."""
    await send_html(context.bot, update.effective_chat.id, texts.HELP)


async def new_conversation(update: Update, context: BotContext) -> None:
    """End the current conversation."""
    await context.services.chat.new_conversation(update.effective_chat.id)
    await send_html(context.bot, update.effective_chat.id, texts.NEW_CONVERSATION)


async def respond(context: BotContext, chat_id: int, turn: Awaitable[AgentReply]) -> None:
    """Show typing while the agent works, then deliver its reply, or say the model is away."""
    try:
        async with typing_indicator(context.bot, chat_id):
            reply = await turn
    except APIError as error:
        logger.warning("model call failed for chat %s: %s", chat_id, error)
        await send_html(context.bot, chat_id, texts.MODEL_UNAVAILABLE)
        return
    await send_markdown(context.bot, chat_id, reply.text or texts.EMPTY_REPLY)
    await send_change_notice(context, chat_id, reply.changes)


async def chat_message(update: Update, context: BotContext) -> None:
    """Answer a text message through the agent."""
    chat = update.effective_chat
    sender = update.effective_user.full_name if chat.type != ChatType.PRIVATE else None
    turn = context.services.chat.reply(
        chat.id, owner_id(update), update.effective_message.text, sender, update.update_id
    )
    try:
        await respond(context, chat.id, turn)
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
            await context.bot.send_message(
                update.effective_chat.id, "Sorry, something went wrong on my side."
            )
        except Exception:  # the chat may be unreachable; the error is logged above
            logger.debug("could not report the error to the chat", exc_info=True)
