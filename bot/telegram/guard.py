"""Keep strangers out: only allowed users reach the model and memory."""

from telegram import Update
from telegram.ext import ApplicationHandlerStop

from bot.telegram import texts
from bot.telegram.context import BotContext
from bot.telegram.delivery import send_html
from bot.telegram.filters import ADDRESSED_TO_BOT


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
