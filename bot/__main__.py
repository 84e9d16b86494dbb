"""Run the bot: `python -m bot` applies migrations, then long-polls Telegram or serves webhooks."""

from bot.collector import hold_full_passes

if __name__ == "__main__":  # run, not imported: tests import this module
    hold_full_passes()

import base64
import hashlib
import hmac
import logging
import sys
from urllib.parse import urlsplit

from sqlalchemy.exc import SQLAlchemyError
from telegram.error import NetworkError, TelegramError

from bot.agent.account import AccountError
from bot.app import build_application
from bot.log_setup import configure_logging
from bot.schema_head import at_head
from bot.settings import Settings, SettingsError, load_settings
from bot.telegram.native import ALLOWED_UPDATES
from bot.telegram.runtime.acks import AckQueue
from memory.db import normalize_database_url

logger = logging.getLogger("bot")

# Where the bot serves webhooks when WEBHOOK_URL has no path of its own.
DEFAULT_WEBHOOK_PATH = "telegram"
# The port to listen on when the host sets no PORT (one Telegram allows for webhooks).
DEFAULT_WEBHOOK_PORT = 8443
# Telegram's highest max_connections: one open request per update not yet stored or handled.
WEBHOOK_MAX_CONNECTIONS = 100
# Mixed into the bot token to derive a stable webhook secret when WEBHOOK_SECRET is unset.
WEBHOOK_SECRET_CONTEXT = b"memory-bot webhook secret token v1"
# How PTB's retry loop names its start-up calls to Telegram (getMe, deleteWebhook, setWebhook)
# when it logs their failure, on the logger "telegram.ext", just before raising it to us.
PTB_BOOTSTRAP_PREFIX = "Network Retry Loop (Bootstrap"


class BootstrapTracebackFilter(logging.Filter):
    """Drop PTB's traceback of a failed start-up call: main() reports the error in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep every record but a start-up call's error report."""
        return not (
            record.levelno >= logging.ERROR and record.getMessage().startswith(PTB_BOOTSTRAP_PREFIX)
        )


def webhook_secret(settings: Settings) -> str:
    """Return WEBHOOK_SECRET, or one derived from the bot token that stays the same on restart."""
    if settings.webhook_secret is not None:
        return settings.webhook_secret.get_secret_value()
    token = settings.telegram_bot_token.get_secret_value().encode()
    digest = hmac.new(token, WEBHOOK_SECRET_CONTEXT, hashlib.sha256).digest()
    # URL-safe base64 uses exactly Telegram's secret alphabet: A-Z, a-z, 0-9, _ and -.
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def webhook_endpoint(webhook_url: str) -> tuple[str, str]:
    """Return the path to listen on and the full URL to register, from WEBHOOK_URL."""
    path = urlsplit(webhook_url).path.strip("/")
    if path:
        return path, webhook_url
    return DEFAULT_WEBHOOK_PATH, f"{webhook_url.rstrip('/')}/{DEFAULT_WEBHOOK_PATH}"


def secrets_of(settings: Settings) -> list[str]:
    """Return every value the logs must never show."""
    values = [
        settings.telegram_bot_token.get_secret_value(),
        settings.anthropic_api_key.get_secret_value(),
        webhook_secret(settings),
    ]
    password = normalize_database_url(settings.database_url).password
    if password:
        values.append(str(password))
    return values


def serve(settings: Settings) -> None:
    """Long-poll Telegram, or serve webhooks when WEBHOOK_URL is set, until a signal stops us."""
    application = build_application(settings)
    if settings.webhook_url is None:
        if settings.port is not None:
            logger.warning(
                "PORT is set but WEBHOOK_URL is not: long-polling, so nothing listens on PORT "
                "(set WEBHOOK_URL for a web process, or run this as a worker)"
            )
        application.run_polling(allowed_updates=ALLOWED_UPDATES)
        return
    path, url = webhook_endpoint(settings.webhook_url)
    port = settings.port or DEFAULT_WEBHOOK_PORT
    if isinstance(application.update_queue, AckQueue):
        # Telegram's answer waits until the update is stored or handled (runtime/acks.py).
        application.update_queue.waiting = True
    logger.info("serving webhooks on %s:%s/%s", settings.webhook_listen, port, path)
    application.run_webhook(
        listen=settings.webhook_listen,
        port=port,
        url_path=path,
        webhook_url=url,
        secret_token=webhook_secret(settings),
        allowed_updates=ALLOWED_UPDATES,
        # Telegram's most: updates wait for their answer, so each open one is a connection.
        max_connections=WEBHOOK_MAX_CONNECTIONS,
    )


def migrate(database_url: str) -> bool:
    """Bring the database to the newest migration; log why not and return False on failure."""
    if at_head(database_url):
        return True
    # Alembic loads only when there is something to migrate (bot/schema_head.py says why).
    from alembic.util import CommandError

    from bot.migrations import upgrade_database

    try:
        upgrade_database(database_url)
    except (CommandError, SQLAlchemyError, OSError) as error:
        logger.error("cannot migrate the database: %s", error)
        return False
    return True


def main() -> int:
    """Start the bot and run until stopped by a signal."""
    try:
        settings = load_settings()
    except SettingsError as error:
        print(error, file=sys.stderr)
        return 2
    configure_logging(settings.log_level, secrets_of(settings))
    if not migrate(settings.database_url):
        return 1
    # Only start-up calls: errors while running (the polling loop's) stay logged in full.
    logging.getLogger("telegram.ext").addFilter(BootstrapTracebackFilter())
    try:
        serve(settings)
    except AccountError as error:
        logger.error("cannot use the model: %s", error)
        return 1
    except NetworkError as error:  # TimedOut included
        logger.error("could not reach Telegram: %s", error)
        return 1
    except TelegramError as error:
        logger.error("Telegram refused to start the bot: %s", error)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
