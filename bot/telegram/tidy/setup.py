"""Wire tidy passes and imports into the Application: imported files and the nightly pass."""

from telegram.ext import MessageHandler, filters

from bot.telegram.chat.filters import NEW_MESSAGES
from bot.telegram.context import BotApplication
from bot.telegram.imports.commands import import_file
from bot.telegram.tidy.nightly import NIGHTLY_FIRST, NIGHTLY_INTERVAL, nightly_job

# A document whose caption is /memory import (also /memory@bot import).
IMPORT_FILE = filters.Document.ALL & filters.CaptionRegex(r"(?i)^/memory(@\w+)?\s+import\b")


def register(application: BotApplication) -> None:
    """Handle imported files; check hourly for nightly passes if on (buttons: buttons.py)."""
    # Before the handler of files to chat about: this file is for memory.
    application.add_handler(MessageHandler(NEW_MESSAGES & IMPORT_FILE, import_file))
    if application.bot_data.services.settings.tidy_nightly and application.job_queue:
        # Jobs added before start wait for the queue to start with the Application.
        application.job_queue.run_repeating(
            nightly_job, interval=NIGHTLY_INTERVAL, first=NIGHTLY_FIRST
        )
