"""Run the bot: `python -m bot` applies migrations, then long-polls Telegram."""

import logging
import sys

from telegram import Update

from bot.app import build_application
from bot.log_setup import configure_logging
from bot.migrations import upgrade_database
from bot.settings import SettingsError, load_settings

logger = logging.getLogger("bot")


def main() -> int:
    """Start the bot and run until stopped by a signal."""
    try:
        settings = load_settings()
    except SettingsError as error:
        print(error, file=sys.stderr)
        return 2
    configure_logging(
        settings.log_level,
        [
            settings.telegram_bot_token.get_secret_value(),
            settings.anthropic_api_key.get_secret_value(),
        ],
    )
    upgrade_database(settings.database_url)
    application = build_application(settings)
    application.run_polling(allowed_updates=Update.ALL_TYPES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
