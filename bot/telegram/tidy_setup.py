"""Wire tidy passes and imports into the Application: their buttons and the nightly pass."""

from telegram.ext import CallbackQueryHandler

from bot.telegram.context import BotApplication
from bot.telegram.tidy_buttons import on_plan_button
from bot.telegram.tidy_callbacks import CALLBACK_PATTERN
from bot.telegram.tidy_nightly import NIGHTLY_FIRST, NIGHTLY_INTERVAL, nightly_job


def add_tidy(application: BotApplication) -> None:
    """Handle the plan buttons; check hourly for nightly passes when TIDY_NIGHTLY is on."""
    application.add_handler(CallbackQueryHandler(on_plan_button, pattern=CALLBACK_PATTERN))
    if application.bot_data.services.settings.tidy_nightly and application.job_queue:
        # Jobs added before start wait for the queue to start with the Application.
        application.job_queue.run_repeating(
            nightly_job, interval=NIGHTLY_INTERVAL, first=NIGHTLY_FIRST
        )
