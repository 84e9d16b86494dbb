"""Build the Telegram Application and everything it depends on, from Settings."""

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial

from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import Update
from telegram.error import TelegramError
from telegram.ext import (
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from bot.agent.account import check_account
from bot.agent.attachments import Files, FileSource
from bot.agent.chat import ChatService
from bot.agent.compaction import Compactor
from bot.agent.consent import Consent, consent_on
from bot.agent.erasure import DataEraser
from bot.agent.file_cache import FileCache, remove_stale_partials
from bot.agent.loop import Agent, AgentConfig
from bot.agent.transcription import openai_transcriber
from bot.agent.voice import VoiceNotes
from bot.conversations.leases import TurnLeases
from bot.conversations.store import ConversationStore
from bot.conversations.vector_setup import conversation_search
from bot.reminders.due import Clock as ReminderClock
from bot.reminders.due import DueLoop
from bot.reminders.store import ReminderStore
from bot.reminders.tools import ReminderTools
from bot.settings import Settings
from bot.telegram import handlers, texts
from bot.telegram.callbacks import CALLBACK_PATTERN
from bot.telegram.context import BotApplication, BotContext, BotData, Services, account_notices
from bot.telegram.cooldown import Clock
from bot.telegram.delete_data import delete_my_data, on_delete_button
from bot.telegram.delete_texts import CALLBACK_PATTERN as DELETE_CALLBACK_PATTERN
from bot.telegram.downloads import TelegramFiles
from bot.telegram.filters import ADDRESSED_TO_BOT, NEW_MESSAGES
from bot.telegram.guard import Guard
from bot.telegram.lifecycle import (
    forget_old_conversations,
    install_stop_signals,
    remove_stop_signals,
    start_leases,
    stop_leases,
)
from bot.telegram.memory_buttons import on_button
from bot.telegram.memory_commands import memory_command
from bot.telegram.processing import PerChatUpdateProcessor
from bot.telegram.rate_limit import ReplyFirstRateLimiter
from bot.telegram.reminder_views import CALLBACK_PATTERN as REMINDER_CALLBACK_PATTERN
from bot.telegram.reminders import (
    TelegramOutlet,
    on_reminder_button,
    reminders_command,
    timezone_command,
)
from bot.telegram.tidy_setup import add_tidy
from bot.telegram.urgent import outside_lane
from bot.telegram.voice import voice_message
from bot.web_setup import web_tools
from memory.control import MemoryControl
from memory.db import create_engine, create_sessionmaker
from memory.models import utcnow
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from memory.tokens import encoding
from memory.undo import UndoLog

logger = logging.getLogger(__name__)

MAX_CONCURRENT_UPDATES = 256
ANTHROPIC_MAX_RETRIES = 4
ANTHROPIC_TIMEOUT_SECONDS = 120
RECOVERY_WAIT_SECONDS = 30
RATE_LIMIT_RETRIES = 3
# Old conversations are deleted once a day, the first time soon after start-up.
RETENTION_INTERVAL = timedelta(days=1)
RETENTION_FIRST_RUN = timedelta(minutes=1)


def file_cache(settings: Settings) -> FileCache:
    """Return the local cache of users' files, by hash, within FILE_CACHE_MB."""
    return FileCache(settings.file_cache_dir, settings.file_cache_mb * 1024 * 1024)


def build_files(settings: Settings, source: FileSource) -> Files:
    """Build the file service: files users send, from source through a bounded local cache."""
    return Files(source, file_cache(settings))


def build_voice(settings: Settings, source: FileSource) -> VoiceNotes:
    """Build voice notes' service: transcribed when TRANSCRIPTION_* are set, else refused."""
    transcriber = None
    if settings.transcription_on:
        assert settings.transcription_base_url and settings.transcription_model
        assert settings.transcription_api_key is not None  # all three or none (Settings)
        transcriber = openai_transcriber(
            settings.transcription_base_url,
            settings.transcription_api_key.get_secret_value(),
            settings.transcription_model,
        )
    max_bytes = settings.voice_max_mb * 1024 * 1024
    return VoiceNotes(source, file_cache(settings), transcriber, settings.voice_max_seconds,
                      max_bytes)  # fmt: skip


def model_client(
    settings: Settings, http_client: DefaultAsyncHttpxClient | None = None
) -> AsyncAnthropic:
    """Return the Messages API client, retrying what the SDK deems retryable."""
    return AsyncAnthropic(
        api_key=settings.anthropic_api_key.get_secret_value(),
        base_url=settings.anthropic_base_url,
        max_retries=ANTHROPIC_MAX_RETRIES,
        timeout=ANTHROPIC_TIMEOUT_SECONDS,
        http_client=http_client,
    )


def agent_config(settings: Settings) -> AgentConfig:
    """Return how the agent calls the model, from the settings."""
    return AgentConfig(
        model=settings.anthropic_model,
        max_tokens=settings.anthropic_max_tokens,
        max_tool_rounds=settings.agent_max_tool_rounds,
        memory_limit=settings.memory_max_items,
        zone=settings.zone,
        file_token_budget=settings.history_token_budget,
    )


def memory_services(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]
) -> tuple[MemoryStore, MemorySwitch, UndoLog, Consent]:
    """Build the memory store, its switch and undo log, and the answers to memory questions."""
    limit = settings.memory_max_items
    memories = MemoryStore(sessionmaker, settings.memory_token_budget, limit)
    consent = consent_on(sessionmaker, memories, settings.max_memory_proposals)
    return memories, MemorySwitch(sessionmaker), UndoLog(sessionmaker, limit), consent


def build_services(
    settings: Settings,
    files: Files,
    *,
    clock: Callable[[], datetime] = utcnow,
    http_client: DefaultAsyncHttpxClient | None = None,
    reminder_clock: ReminderClock | None = None,
) -> Services:
    """Build the engine, stores, model client and services (evals/ pass a clock, an HTTP client)."""
    sessionmaker = create_sessionmaker(engine := create_engine(settings.database_url))
    memories, switch, undo_log, consent = memory_services(settings, sessionmaker)
    idle, budget = timedelta(minutes=settings.conversation_idle_minutes), memories.block_budget
    conversations = ConversationStore(sessionmaker, idle, clock, block_budget=budget)
    anthropic = model_client(settings, http_client)
    compactor = Compactor(
        anthropic, settings.anthropic_model, conversations, settings.history_token_budget
    )
    store, search = ReminderStore(sessionmaker), conversation_search(settings, conversations)
    reminders = ReminderTools(store, settings.reminders_max_active, reminder_clock)
    config, deadline = agent_config(settings), settings.turn_deadline_seconds
    agent = Agent(
        anthropic, config, conversations, memories, switch, search,
        files, reminders, consent, web_tools(settings, sessionmaker, store.zone_of, clock),
    )  # fmt: skip
    control = MemoryControl(memories, switch, undo_log, conversations.refresh_memory_block)
    return Services(
        settings=settings,
        engine=engine,
        anthropic=anthropic,
        chat=ChatService(conversations, agent, compactor, settings.zone, files, clock, deadline),
        conversations=conversations,
        memories=memories,
        memory_control=control,
        reminders=reminders,
        leases=TurnLeases(sessionmaker, timedelta(seconds=settings.turn_lease_seconds)),
        eraser=DataEraser(sessionmaker, files.cache),
        consent=consent,
    )


async def remove_crash_leftovers(settings: Settings) -> None:
    """Delete the half-written files a crash left in the file cache, and say how many."""
    try:
        count, size = await asyncio.to_thread(remove_stale_partials, settings.file_cache_dir)
    except OSError as error:  # a cache it cannot clean only costs disk space
        logger.warning("could not clean the file cache %s: %s", settings.file_cache_dir, error)
        return
    if count:
        logger.info("removed %d partial file(s), %d bytes, left in the file cache", count, size)


async def post_init(application: BotApplication) -> None:
    """Get ready to answer once Telegram has answered getMe; raise AccountError for a bad key."""
    data = application.bot_data
    settings = data.services.settings
    # First: a wrong key or model stops start-up (AccountError) before anything else starts.
    await check_account(data.services.anthropic, settings.anthropic_model)
    # Building the tokenizer takes a third of a second; the first message should not wait.
    encoding()
    await remove_crash_leftovers(settings)
    logger.info("started as @%s", application.bot.username)
    install_stop_signals(application, settings.shutdown_grace_seconds)
    start_leases(application)
    reminders = data.services.reminders  # a fire's lease is a turn's (taken over as soon)
    outlet, lease = TelegramOutlet(application), timedelta(seconds=settings.turn_lease_seconds)
    due_loop = DueLoop(reminders.store, outlet, reminders.clock, reminders.alarm, lease)
    data.due_loop = asyncio.create_task(due_loop.run())
    if settings.conversation_retention_days and application.job_queue is not None:
        # PTB's job-queue extra is a dependency, so the queue is always there.
        application.job_queue.run_repeating(
            forget_old_conversations, interval=RETENTION_INTERVAL, first=RETENTION_FIRST_RUN
        )
    if not settings.allowed_user_ids:
        logger.warning(
            "ALLOWED_USER_IDS is empty: the bot answers everyone with their user id only"
        )
    try:
        await application.bot.set_my_commands(texts.COMMANDS)
    except TelegramError as error:
        # The menu is a convenience; the commands work without it.
        logger.warning("could not register the command menu: %s", error)


async def post_shutdown(application: BotApplication) -> None:
    """Close the model client and the database engine."""
    data = application.bot_data
    remove_stop_signals()
    # An album still being collected is stored; it is answered after the restart.
    data.albums.cancel()
    due_loop = data.due_loop
    if due_loop is not None:
        due_loop.cancel()
        await asyncio.wait({due_loop}, timeout=RECOVERY_WAIT_SECONDS)
    recovery = data.recovery
    if recovery is not None:
        # Cancelling it mid-query can strand a database connection; it is short, so wait.
        await asyncio.wait({recovery}, timeout=RECOVERY_WAIT_SECONDS)
        if recovery.done() and not recovery.cancelled() and recovery.exception():
            logger.error("answering after the restart failed", exc_info=recovery.exception())
    await stop_leases(application)
    await data.services.anthropic.close()
    await data.services.voice.close()
    await data.services.engine.dispose()


def file_base_url(api_base_url: str) -> str:
    """Return the file download base URL that goes with a Bot API base URL."""
    root, _, _ = api_base_url.rstrip("/").rpartition("/bot")
    return f"{root}/file/bot"


def add_handlers(application: BotApplication, clock: Clock = time.monotonic) -> None:
    """Register the guard (on clock), the commands and the chat handler."""
    # Before the guard: whoever upgraded the group, its memories must follow it.
    application.add_handler(
        MessageHandler(filters.StatusUpdate.MIGRATE, handlers.group_migrated), group=-2
    )
    application.add_handler(TypeHandler(Update, Guard(clock).check), group=-1)
    application.add_handler(CommandHandler("start", handlers.start, NEW_MESSAGES))
    application.add_handler(CommandHandler("help", handlers.help_command, NEW_MESSAGES))
    application.add_handler(CommandHandler("new", handlers.new_conversation, NEW_MESSAGES))
    application.add_handler(CommandHandler("memory", memory_command, NEW_MESSAGES))
    application.add_handler(CommandHandler("reminders", reminders_command, NEW_MESSAGES))
    application.add_handler(CommandHandler("timezone", timezone_command, NEW_MESSAGES))
    application.add_handler(CommandHandler("delete_my_data", delete_my_data, NEW_MESSAGES))
    application.add_handler(CallbackQueryHandler(on_delete_button, pattern=DELETE_CALLBACK_PATTERN))
    application.add_handler(
        CallbackQueryHandler(on_reminder_button, pattern=REMINDER_CALLBACK_PATTERN)
    )
    # Malformed data in our namespaces, or from an older version of the bot, is a stale button.
    application.add_handler(CallbackQueryHandler(on_button, pattern=CALLBACK_PATTERN))
    add_tidy(application)  # the plan buttons, and the nightly pass if TIDY_NIGHTLY is on
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


def application_builder(settings: Settings) -> ApplicationBuilder:
    """Start the Application: Telegram's URLs, the typed context and bot_data, start and stop."""
    builder: ApplicationBuilder = (
        ApplicationBuilder()
        .token(settings.telegram_bot_token.get_secret_value())
        .base_url(settings.telegram_api_base_url)
        .base_file_url(file_base_url(settings.telegram_api_base_url))
        .context_types(ContextTypes(context=BotContext, bot_data=BotData))
        .post_init(post_init)
        .post_shutdown(post_shutdown)
    )
    return builder


def equip(
    application: BotApplication,
    settings: Settings,
    clock: Clock = time.monotonic,
    reminder_clock: ReminderClock | None = None,
) -> BotApplication:
    """Give a built Application its services and handlers; return it."""
    source = TelegramFiles(application.bot)
    services = build_services(
        settings, build_files(settings, source), reminder_clock=reminder_clock
    )
    services.voice = build_voice(settings, source)
    services.account_notices = account_notices(clock)  # on the guard's clock, for tests
    application.bot_data.services = services
    add_handlers(application, clock)
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
    application = (
        application_builder(settings)
        .concurrent_updates(PerChatUpdateProcessor(max_concurrent_updates, skips_lane))
        .rate_limiter(ReplyFirstRateLimiter(max_retries=RATE_LIMIT_RETRIES))
        .build()
    )
    return equip(application, settings, clock, reminder_clock)
