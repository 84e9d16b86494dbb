"""Build the web tools from the settings: their switch and limits, each owner's daily count."""

from collections.abc import Callable
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.agent.web.tools import WebConfig
from bot.agent.web.turn import WebTools, ZoneOf
from bot.conversations.web_uses import WebUses
from bot.settings import Settings


def web_tools(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    zone_of: ZoneOf,
    clock: Callable[[], datetime],
) -> WebTools:
    """Return the web tools within WEB_TOOLS, WEB_USES_PER_TURN and WEB_USES_PER_DAY."""
    config = WebConfig(settings.web_tools, settings.web_uses_per_turn, settings.web_uses_per_day)
    return WebTools(config, WebUses(sessionmaker), zone_of, settings.zone, clock)
