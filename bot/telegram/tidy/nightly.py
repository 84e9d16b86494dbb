"""The nightly tidy pass (TIDY_NIGHTLY): at about 04:00 in each owner's zone, once a day.

A job runs every hour in every process; an owner whose local hour is 4 (or 5, for a pass a
stopped process left) and who had no automatic pass since their midnight gets one, claimed by
one process for the owner's date (bot.conversations.job_claims), in their chat's lane, so it
never interleaves with a chat turn. Its plan is sent to ask, or applied at once with Undo all
when TIDY_AUTO_APPLY is on.
"""

import logging
from datetime import datetime, time, timedelta, tzinfo
from functools import partial

from bot.conversations.job_claims import JobName
from bot.conversations.snapshot import ChatThread
from bot.telegram.context import BotApplication, BotContext
from bot.telegram.runtime.processing import lanes
from bot.telegram.tidy import texts
from bot.telegram.tidy.commands import owner_zone, show_outcome
from bot.telegram.tidy.views import decided_view
from bot.telegram.ui import send_view
from bot.upkeep.tidy import PassResult
from memory.batches.values import BatchStale, BatchTooBig
from memory.models import utcnow

logger = logging.getLogger(__name__)

# The local hours a pass may start in: about 04:00, and one more hour, so a pass a stopped
# process left unfinished is taken over by another process's next hourly job that night.
NIGHTLY_HOURS = (4, 5)
NIGHTLY_INTERVAL = timedelta(hours=1)
NIGHTLY_FIRST = timedelta(minutes=2)


async def _auto_apply(application: BotApplication, owner_id: int, batch_id: int) -> None:
    """Apply a nightly plan without asking, and say so with Undo all."""
    services = application.bot_data.services
    try:
        batch = await services.tidy.batches.apply(owner_id, batch_id)
    except (BatchStale, BatchTooBig) as error:
        logger.info("nightly tidy of owner %s not applied: %s", owner_id, type(error).__name__)
        return
    await services.conversations.refresh_memory_block(owner_id)
    view = decided_view(batch, texts.applied(batch), undoable=True)
    await send_view(application.bot, ChatThread(owner_id, None), view)


async def nightly_pass(application: BotApplication, owner_id: int, now: datetime) -> bool:
    """Run the owner's automatic pass unless one ran since their midnight; tell if it ran."""
    services = application.bot_data.services
    zone = await owner_zone(application.bot_data.services, owner_id)
    local = now.astimezone(zone)
    midnight = datetime.combine(local.date(), time(), zone)
    if await services.tidy.batches.automatic_since(owner_id, midnight):
        return False
    # One process's, whichever asks first; one that died mid-pass leaves it to the next.
    period = f"{owner_id}:{local.date().isoformat()}"
    ran = await services.jobs.run_once(
        JobName.NIGHTLY_TIDY, period, partial(_run_pass, application, owner_id, now, zone)
    )
    return ran is not None


async def _run_pass(
    application: BotApplication, owner_id: int, now: datetime, zone: tzinfo
) -> bool:
    """Run the owner's automatic pass and show or apply its plan; return True."""
    services = application.bot_data.services
    tidy = services.tidy
    outcome = await tidy.run(owner_id, now, zone, automatic=True)
    if outcome.result is not PassResult.PROPOSED or outcome.batch_id is None:
        return True  # nothing to say in the night
    if services.settings.tidy_auto_apply:
        await _auto_apply(application, owner_id, outcome.batch_id)
    else:
        place = ChatThread(owner_id, None)
        await show_outcome(application.bot, place, services, owner_id, outcome)
    return True


async def run_nightly(application: BotApplication, now: datetime) -> int:
    """Give every owner whose local hour is in NIGHTLY_HOURS their pass; return how many ran."""
    services = application.bot_data.services
    ran = 0
    for owner_id in await services.tidy.batches.owners_with_memories():
        try:
            ran += await _nightly_owner(application, owner_id, now)
        except Exception:
            # One owner's failure (bad data, a chat gone) must not cost the others their pass.
            logger.exception("nightly tidy of owner %s failed; the other owners go on", owner_id)
    return ran


async def _nightly_owner(application: BotApplication, owner_id: int, now: datetime) -> bool:
    """Run one owner's pass if their local hour is in NIGHTLY_HOURS; tell if it ran."""
    zone = await owner_zone(application.bot_data.services, owner_id)
    if now.astimezone(zone).hour not in NIGHTLY_HOURS:
        return False
    # In the owner's chat lane, under its lease: never beside one of its chat turns.
    return await lanes(application).run_exclusive(
        owner_id, nightly_pass(application, owner_id, now)
    )


async def nightly_job(context: BotContext) -> None:
    """Run the nightly passes that are due now (scheduled only when TIDY_NIGHTLY is on)."""
    ran = await run_nightly(context.application, utcnow())
    if ran:
        logger.info("ran %d nightly tidy pass(es)", ran)
