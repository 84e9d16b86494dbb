"""Start and stop the bot's runtime around the Application: the account check, loops, jobs."""

import asyncio
import logging
from datetime import timedelta

from telegram.error import TelegramError

from bot.agent.account import check_account
from bot.collector import give_back_freed_memory, resume_full_passes
from bot.media.file_cache import remove_stale_partials
from bot.reminders.due import DueLoop
from bot.settings import Settings
from bot.telegram import texts
from bot.telegram.context import BotApplication
from bot.telegram.reminders.commands import TelegramOutlet
from bot.telegram.runtime.lifecycle import (
    forget_old_conversations,
    install_stop_signals,
    remove_stop_signals,
    start_leases,
    stop_leases,
)
from memory.tokens import encoding

logger = logging.getLogger(__name__)

RECOVERY_WAIT_SECONDS = 30
# Old conversations are deleted once a day, the first time soon after start-up; every
# process asks every hour, and the day's run is claimed by one (bot.conversations.job_claims).
RETENTION_INTERVAL = timedelta(hours=1)
RETENTION_FIRST_RUN = timedelta(minutes=1)


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
    # Parsing the tokenizer's ranks and importing leave freed memory the allocator keeps.
    give_back_freed_memory()
    resume_full_passes()
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
    await data.services.conversations.close()  # the vectors' fill, before the engine goes
    await data.services.anthropic.close()
    await data.services.voice.close()
    await data.services.engine.dispose()
