"""Build the Telegram Application: its services (bot.compose), then each feature's handlers."""

import functools
import ssl
import time
from functools import partial

import httpx
from telegram.ext import ApplicationBuilder, ContextTypes
from telegram.request import HTTPXRequest

from bot.compose import Clocks, build_services
from bot.reminders.due import Clock as ReminderClock
from bot.settings import Settings
from bot.telegram import buttons, context
from bot.telegram.chat import setup as chat_setup
from bot.telegram.chat.downloads import TelegramFiles
from bot.telegram.context import BotApplication, BotContext, BotData
from bot.telegram.erase import commands as delete_data
from bot.telegram.memories import commands as memory_commands
from bot.telegram.miniapp import setup as mini_app
from bot.telegram.reminders import commands as reminders
from bot.telegram.runtime.acks import AckQueue
from bot.telegram.runtime.cooldown import Clock
from bot.telegram.runtime.processing import PerChatUpdateProcessor
from bot.telegram.runtime.rate_limit import ReplyFirstRateLimiter
from bot.telegram.runtime.startup import post_init, post_shutdown
from bot.telegram.runtime.urgent import outside_lane
from bot.telegram.tidy import setup as tidy_setup

MAX_CONCURRENT_UPDATES = 256
RATE_LIMIT_RETRIES = 3
# PTB's own pool sizes: one connection for getUpdates, 256 for everything else.
TELEGRAM_CONNECTIONS = 256


def file_base_url(api_base_url: str) -> str:
    """Return the file download base URL that goes with a Bot API base URL."""
    root, _, _ = api_base_url.rstrip("/").rpartition("/bot")
    return f"{root}/file/bot"


def register(application: BotApplication, clock: Clock = time.monotonic) -> None:
    """Add each feature's handlers, the guard (on clock) first and the chat last."""
    chat_setup.register_guard(application, clock)
    memory_commands.register(application)
    reminders.register(application)
    delete_data.register(application)
    # Before the chat: an imported file is for memory, not a file to chat about.
    tidy_setup.register(application)
    buttons.register(application)  # every button, ours or stale
    chat_setup.register(application)


@functools.cache
def telegram_tls() -> ssl.SSLContext:
    """Return the TLS context of every Telegram request: loading CA certificates takes ~0.1 s."""
    return httpx.create_ssl_context()  # what PTB's httpx client makes for itself, made once


def telegram_request(connections: int) -> HTTPXRequest:
    """Return a PTB request with connections connections, sharing the process's TLS context."""
    return HTTPXRequest(connection_pool_size=connections, httpx_kwargs={"verify": telegram_tls()})


def application_builder(settings: Settings) -> context.BotApplicationBuilder:
    """Start the Application: Telegram's URLs, the typed context and bot_data, start and stop."""
    return (
        ApplicationBuilder()
        .token(settings.telegram_bot_token.get_secret_value())
        .request(telegram_request(TELEGRAM_CONNECTIONS))
        .get_updates_request(telegram_request(1))
        .base_url(settings.telegram_api_base_url)
        .base_file_url(file_base_url(settings.telegram_api_base_url))
        .context_types(ContextTypes(context=BotContext, bot_data=BotData))
        .post_init(post_init)
        .post_shutdown(post_shutdown)
    )


def equip(
    application: BotApplication,
    settings: Settings,
    clock: Clock = time.monotonic,
    reminder_clock: ReminderClock | None = None,
) -> BotApplication:
    """Give a built Application its services, built once from its bot, and handlers; return it."""
    # Files and voice notes are fetched through the Application's bot, so it comes first.
    clocks = Clocks(reminders=reminder_clock, notices=clock)
    source = TelegramFiles(application.bot)
    application.bot_data.services = build_services(settings, source, clocks=clocks)
    register(application, clock)
    mini_app.install(application, settings, clock)
    return application


def build_application(
    settings: Settings,
    *,
    max_concurrent_updates: int = MAX_CONCURRENT_UPDATES,
    clock: Clock = time.monotonic,
    reminder_clock: ReminderClock | None = None,
) -> BotApplication:
    """Build the Application with its services; nothing connects until it starts."""
    skips_lane = partial(outside_lane, allowed_user_ids=settings.allowed_user_ids)
    processor, queue = PerChatUpdateProcessor(max_concurrent_updates, skips_lane), AckQueue()
    # A webhook's answer waits for its update: an error when its handling failed.
    processor.handled, processor.failed = queue.acknowledge, queue.refuse
    application = (
        application_builder(settings)
        .update_queue(queue)
        .concurrent_updates(processor)
        .rate_limiter(ReplyFirstRateLimiter(max_retries=RATE_LIMIT_RETRIES))
        .build()
    )
    return equip(application, settings, clock, reminder_clock)
