"""What the API's handlers call: the same services as the chat commands, and the announcer."""

from dataclasses import dataclass
from zoneinfo import ZoneInfo

from aiohttp import web

from bot.reminders.tools import ReminderTools
from bot.webapp.access import OWNER
from bot.webapp.events import Announcer
from memory.batches.store import BatchStore
from memory.control import MemoryControl


@dataclass(frozen=True)
class AppServices:
    """The services the Mini App changes memory and reminders through."""

    memory_control: MemoryControl
    batches: BatchStore
    reminders: ReminderTools
    default_zone: str
    announcer: Announcer

    async def zone(self, owner_id: int) -> ZoneInfo:
        """Return the owner's time zone: theirs if set, else the bot's."""
        return ZoneInfo(await self.reminders.store.zone_of(owner_id) or self.default_zone)


SERVICES = web.AppKey("services", AppServices)


def services_of(request: web.Request) -> tuple[AppServices, int]:
    """Return the services and the signed-in owner of an API request."""
    return request.app[SERVICES], request[OWNER]
