"""Start-up and shutdown work: answer what a crash left unanswered, stop within a grace period."""

import asyncio
import logging
import signal
from datetime import timedelta

from bot.conversations.snapshot import Unanswered
from bot.telegram.context import BotApplication, BotContext
from bot.telegram.delivery import answer_if_unanswered
from bot.telegram.processing import lanes
from memory.models import utcnow

logger = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def still_allowed(pending: Unanswered, allowed: frozenset[int]) -> bool:
    """Tell whether the sender of an unanswered message may still use the bot."""
    # Turns stored before senders were recorded: a private chat's id is its user's id.
    sender = pending.sender_id if pending.sender_id is not None else pending.conversation.chat_id
    return sender in allowed


async def answer_unanswered(application: BotApplication) -> None:
    """Answer messages that a crash or a stop left stored but unanswered."""
    services = application.bot_data.services
    allowed = services.settings.allowed_user_ids
    everything = await services.conversations.unanswered()
    pending = [p.conversation for p in everything if still_allowed(p, allowed)]
    if len(pending) < len(everything):
        logger.info("not answering %d message(s) from users no longer allowed",
                    len(everything) - len(pending))  # fmt: skip
    if pending:
        logger.info("answering %d message(s) left unanswered by the last run", len(pending))
    results = await asyncio.gather(
        *(answer_if_unanswered(application, c.place, c.id) for c in pending),
        return_exceptions=True,
    )
    for conversation, result in zip(pending, results, strict=True):
        if isinstance(result, Exception):
            logger.error(
                "could not answer conversation %s after the restart",
                conversation.id,
                exc_info=result,
            )


async def forget_old_conversations(context: BotContext) -> None:
    """Delete conversations older than CONVERSATION_RETENTION_DAYS; memories stay."""
    services = context.services
    days = services.settings.conversation_retention_days
    if days is None:  # scheduled only when set
        return
    deleted = await services.conversations.forget_before(utcnow() - timedelta(days=days))
    if deleted:
        logger.info("deleted %d conversation(s) older than %d days", deleted, days)


async def stop_gracefully(application: BotApplication, grace_seconds: float) -> None:
    """Stop fetching updates, let running turns finish within the grace period, then stop."""
    if application.updater is not None and application.updater.running:
        await application.updater.stop()
    # Let the updates already fetched become tasks before waiting for them; PTB offers no
    # event for "queue empty" (its join() waits for processing), hence the short poll.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace_seconds
    while not application.update_queue.empty() and loop.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    await asyncio.sleep(0)
    await lanes(application).drain(max(0.0, deadline - loop.time()))
    application.stop_running()


def install_stop_signals(application: BotApplication, grace_seconds: float) -> None:
    """Make SIGTERM and SIGINT stop the bot gracefully, once."""
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task] = []

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
