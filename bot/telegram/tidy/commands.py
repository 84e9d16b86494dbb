"""/memory tidy: run a pass and show its plan as one message with Apply, skip and Cancel."""

import zoneinfo
from datetime import tzinfo

from telegram import Bot, Update

from bot.conversations.snapshot import ChatThread
from bot.telegram.chat.reading import place_of
from bot.telegram.chat.sending import send_html
from bot.telegram.context import BotContext, Services, owner_id
from bot.telegram.tidy import texts
from bot.telegram.tidy.views import plan_view
from bot.telegram.ui import send_view
from bot.upkeep.tidy import PassOutcome, PassResult
from memory.models import utcnow


async def owner_zone(services: Services, owner: int) -> tzinfo:
    """Return the owner's zone (set with /timezone), or the bot's."""
    name = await services.reminders.store.zone_of(owner)
    try:
        return zoneinfo.ZoneInfo(name) if name else services.settings.zone
    except zoneinfo.ZoneInfoNotFoundError:
        return services.settings.zone


async def show_outcome(
    bot: Bot, place: ChatThread, services: Services, owner: int, outcome: PassOutcome
) -> None:
    """Show a pass's plan with its buttons, or say why there is none."""
    if outcome.result is PassResult.PROPOSED and outcome.batch_id is not None:
        batch = await services.tidy.batches.find(owner, outcome.batch_id)
        rich = services.settings.rich_messages
        await send_view(bot, place, plan_view(batch, rich=rich))
        return
    if outcome.result is PassResult.REJECTED:
        text = texts.rejected(outcome)
    else:
        text = texts.PASS_TEXTS[outcome.result]
    await send_html(bot, place.chat_id, text, thread_id=place.thread_id)


async def tidy_memories(update: Update, context: BotContext) -> None:
    """Propose merging duplicates, updating contradictions and archiving what expired."""
    services = context.services
    owner = owner_id(update)
    zone = await owner_zone(services, owner)
    outcome = await services.tidy.run(owner, utcnow(), zone)
    await show_outcome(context.bot, place_of(update), services, owner, outcome)
