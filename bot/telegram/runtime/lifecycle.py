"""Start-up and shutdown work: leases and left-over turns, stopping within a grace period."""

import asyncio
import logging
import signal
from datetime import timedelta
from functools import partial

from telegram.error import TelegramError

from bot.conversations.job_claims import JobName
from bot.conversations.lease_wakeups import LeaseWakeups
from bot.conversations.leases import Taken
from bot.conversations.snapshot import Unanswered
from bot.telegram.chat.delivery import deliver_answer
from bot.telegram.context import BotApplication, BotContext
from bot.telegram.runtime.leases import LeaseKeeper, needs_no_turn
from bot.telegram.runtime.outage import Outage, probe
from bot.telegram.runtime.processing import lanes
from memory.models import utcnow

logger = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def still_allowed(pending: Unanswered, allowed: frozenset[int]) -> bool:
    """Tell whether the sender of an unanswered message may still use the bot."""
    # Turns stored before senders were recorded: a private chat's id is its user's id.
    sender = pending.sender_id if pending.sender_id is not None else pending.conversation.chat_id
    return sender in allowed


async def answer_left_over(application: BotApplication, chat_id: int, taken: Taken) -> None:
    """Answer the messages a gone process left unanswered in the chat (not after a restore)."""
    if taken.restored:
        logger.info(
            "chat %s: not answering a turn from before the database was restored (its answer "
            "may have been sent after the backup was taken)",
            chat_id,
        )
        return
    services = application.bot_data.services
    allowed = services.settings.allowed_user_ids
    everything = [
        p for p in await services.conversations.unanswered() if p.conversation.chat_id == chat_id
    ]
    pending = [p.conversation for p in everything if still_allowed(p, allowed)]
    if len(pending) < len(everything):
        logger.info(
            "not answering %d message(s) from users no longer allowed",
            len(everything) - len(pending),
        )
    for conversation in pending:
        logger.info("answering a message a stopped process left unanswered in chat %s", chat_id)
        # Read it again: a newer message may have answered or compacted it. The caller holds
        # the chat's turn already (its lane and its lease).
        snapshot = await services.conversations.snapshot(conversation.id)
        if not snapshot.unanswered:
            continue
        answer = partial(services.chat.answer, snapshot)
        notices = services.account_notices
        try:
            await deliver_answer(
                application.bot, conversation.place, answer, services.drafts, notices
            )
        except TelegramError:
            message = "could not answer conversation %s after the restart"
            logger.error(message, conversation.id, exc_info=True)


def start_leases(application: BotApplication) -> LeaseKeeper:
    """Hold each chat's lease around its turns; answer left-over turns now and every tick."""
    data = application.bot_data
    processor = lanes(application)
    keeper = LeaseKeeper(
        data.services.leases,
        partial(answer_left_over, application),
        keep=data.albums.pending,
        wakeups=LeaseWakeups(data.services.engine),
    )
    keeper.schedule = lambda chat_id: processor.run_exclusive(chat_id, asyncio.sleep(0))
    processor.gate = keeper
    if data.services.settings.webhook_url is not None:
        keeper.queued = processor.queued  # several web processes may share a chat
    processor.ungated = needs_no_turn
    data.leases = keeper
    data.recovery = asyncio.create_task(keeper.first_sweep())
    data.lease_loop = asyncio.create_task(keeper.run())
    data.outage = Outage(partial(probe, data.services.engine))
    return keeper


async def stop_leases(application: BotApplication) -> None:
    """Stop renewing, and hand back the turns not finished, so the next process answers them."""
    data = application.bot_data
    if data.lease_loop is not None:
        data.lease_loop.cancel()
        await asyncio.wait({data.lease_loop})
    if data.leases is not None:
        await data.leases.hand_back()
        await data.leases.close()


async def forget_old_conversations(context: BotContext) -> None:
    """Delete conversations older than CONVERSATION_RETENTION_DAYS once a day; memories stay."""
    services = context.services
    days = services.settings.conversation_retention_days
    if days is None:  # scheduled only when set
        return
    now = utcnow()
    forget = partial(services.conversations.forget_before, now - timedelta(days=days))
    # Asked every hour by every process: the day's run is one process's, taken over if it dies.
    deleted = await services.jobs.run_once(JobName.RETENTION, now.date().isoformat(), forget)
    if deleted:
        logger.info("deleted %d conversation(s) older than %d days", deleted, days)


async def stop_gracefully(application: BotApplication, grace_seconds: float) -> None:
    """Stop fetching updates, let running turns finish within the grace period, then stop."""
    await finish_turns(application, grace_seconds)
    application.stop_running()


async def finish_turns(application: BotApplication, grace_seconds: float) -> None:
    """Stop fetching updates, and finish turns and albums within the grace period."""
    if application.updater is not None and application.updater.running:
        await application.updater.stop()
    data = application.bot_data
    # An album waiting for more items is answered now, as is one whose items are in the queue.
    data.albums.answer_now()
    # Let the updates already fetched become tasks before waiting for them; PTB offers no
    # event for "queue empty" (its join() waits for processing), hence the short poll.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace_seconds
    while not application.update_queue.empty() and loop.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    await asyncio.sleep(0)
    # Leases are still renewed while turns finish, but no new left-over turns are taken on.
    if data.leases is not None:
        data.leases.stopping = True
    processor = lanes(application)
    # An album's answer joins its lane once it starts: wait for albums and lanes alike.
    while (busy := data.albums.answer_now() | processor.running) and loop.time() < deadline:
        await asyncio.wait(busy, timeout=deadline - loop.time())
    await processor.drain(max(0.0, deadline - loop.time()))
    if data.outage is not None:
        # Telegram is still there: say which messages were not answered.
        await data.outage.stop(application)


def install_stop_signals(application: BotApplication, grace_seconds: float) -> None:
    """Make SIGTERM and SIGINT stop the bot gracefully, once."""
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task[None]] = []

    def on_signal(signum: int) -> None:
        if stopping:
            return
        logger.info("received %s: stopping", signal.Signals(signum).name)
        stopping.append(loop.create_task(stop_gracefully(application, grace_seconds)))

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, on_signal, signum)


def remove_stop_signals() -> None:
    """Give the signals back to the event loop's defaults."""
    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        loop.remove_signal_handler(signum)
