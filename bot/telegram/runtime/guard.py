"""Keep strangers out: only allowed users reach the model and memory."""

import logging
import time

from telegram import ChatMember, ChatMemberRestricted, ChatMemberUpdated, Update
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import ApplicationHandlerStop

from bot.telegram import texts
from bot.telegram.chat.filters import ADDRESSED_TO_BOT
from bot.telegram.chat.reading import place_of
from bot.telegram.chat.sending import send_html
from bot.telegram.context import BotContext
from bot.telegram.runtime.cooldown import Clock, Cooldown

logger = logging.getLogger(__name__)

# A chat is told the bot is private at most once in this long.
NOTICE_WINDOW_SECONDS = 10 * 60
# Chats remembered as told; while this many are, other chats are told nothing.
MAX_TOLD_CHATS = 10_000
MEMBER_STATUSES = frozenset({ChatMember.MEMBER, ChatMember.ADMINISTRATOR, ChatMember.OWNER})


def is_member(member: ChatMember) -> bool:
    """Tell whether a chat member is in the chat."""
    if isinstance(member, ChatMemberRestricted):
        return member.is_member
    return member.status in MEMBER_STATUSES


def joined(change: ChatMemberUpdated) -> bool:
    """Tell whether the bot just became a member of a group or channel."""
    if change.chat.type == ChatType.PRIVATE:
        return False
    return not is_member(change.old_chat_member) and is_member(change.new_chat_member)


async def leave(context: BotContext, chat_id: int) -> None:
    """Leave a chat without a word there."""
    logger.info("leaving chat %s: a user not in ALLOWED_USER_IDS added the bot", chat_id)
    try:
        await context.bot.leave_chat(chat_id)
    except TelegramError as error:
        # Removed again meanwhile, or refused: either way there is nothing more to do there.
        logger.warning("could not leave chat %s: %s", chat_id, error)


class Guard:
    """Stop anything not from an allowed user before it reaches the model or memory."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._told = Cooldown(NOTICE_WINDOW_SECONDS, MAX_TOLD_CHATS, clock)
        self._alerted = Cooldown(NOTICE_WINDOW_SECONDS, MAX_TOLD_CHATS, clock)

    async def check(self, update: Update, context: BotContext) -> None:
        """Let allowed users through; leave, alert or tell a stranger at most briefly; stop."""
        user = update.effective_user
        if user is not None and user.id in context.services.settings.allowed_user_ids:
            return
        if update.callback_query is not None:
            # An alert on the button, once per stranger in the window: a flood of presses costs
            # one call to Telegram, and runs outside the chat's lane (see urgent.py).
            if self._alerted.take(update.callback_query.from_user.id):
                await update.callback_query.answer(texts.PRIVATE_BOT_ALERT, show_alert=True)
        elif update.my_chat_member is not None and joined(update.my_chat_member):
            await leave(context, update.my_chat_member.chat.id)
        elif user is not None and self._tell(update):
            place = place_of(update)
            html = texts.private_bot(user.id)
            await send_html(context.bot, place.chat_id, html, thread_id=place.thread_id)
        raise ApplicationHandlerStop

    def _tell(self, update: Update) -> bool:
        """Tell whether a stranger's message is answered: addressed, and the chat's first lately."""
        message = update.message
        if message is None or not ADDRESSED_TO_BOT.check_update(update):
            return False
        return self._told.take(message.chat_id)
