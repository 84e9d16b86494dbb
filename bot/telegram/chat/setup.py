"""Wire the chat into the Application: the guard before all, commands, messages, errors."""

from telegram import Update
from telegram.ext import CommandHandler, MessageHandler, TypeHandler, filters

from bot.telegram.chat import handlers
from bot.telegram.chat.filters import ADDRESSED_TO_BOT, NEW_MESSAGES
from bot.telegram.chat.voice import voice_message
from bot.telegram.context import BotApplication
from bot.telegram.native import StoppedGenerationHandler
from bot.telegram.runtime.cooldown import Clock
from bot.telegram.runtime.guard import Guard


def register_guard(application: BotApplication, clock: Clock) -> None:
    """Let the guard (on clock) see every update first, after a group's move is followed."""
    # Before the guard, which lets no update without a user through (PTB sees none in it):
    # a press of Stop on a draft, outside the chat's lane, so it reaches the reply at once.
    application.add_handler(StoppedGenerationHandler(handlers.generation_stopped), group=-3)
    # Before the guard: whoever upgraded the group, its memories must follow it.
    application.add_handler(
        MessageHandler(filters.StatusUpdate.MIGRATE, handlers.group_migrated), group=-2
    )
    application.add_handler(TypeHandler(Update, Guard(clock).check), group=-1)


def register(application: BotApplication) -> None:
    """Handle /start, /help, /new and the messages to chat about (after other features')."""
    application.add_handler(CommandHandler("start", handlers.start, NEW_MESSAGES))
    application.add_handler(CommandHandler("help", handlers.help_command, NEW_MESSAGES))
    application.add_handler(CommandHandler("new", handlers.new_conversation, NEW_MESSAGES))
    new_messages = NEW_MESSAGES & ADDRESSED_TO_BOT
    application.add_handler(
        MessageHandler(new_messages & filters.TEXT & ~filters.COMMAND, handlers.chat_message)
    )
    # Not limited to messages addressed to the bot: an album's other items do not mention it.
    files = NEW_MESSAGES & (filters.PHOTO | filters.Document.ALL) & ~filters.ANIMATION
    application.add_handler(MessageHandler(files, handlers.file_message))
    spoken = new_messages & (filters.VOICE | filters.VIDEO_NOTE)
    application.add_handler(MessageHandler(spoken, voice_message))
    application.add_handler(
        MessageHandler(
            new_messages & ~filters.TEXT & ~filters.StatusUpdate.ALL, handlers.unsupported_message
        )
    )
    application.add_error_handler(handlers.error_handler)
