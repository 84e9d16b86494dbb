"""What the API's handlers call: the same services as the chat commands, and the announcer."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol
from zoneinfo import ZoneInfo

from aiohttp import web

from bot.reminders.tools import ReminderTools
from bot.webapp.access import OWNER
from bot.webapp.events import Announcer
from bot.webapp.list_cache import ListCache
from memory.batches.store import BatchStore
from memory.control import MemoryControl


class CitingReply(Protocol):
    """A reply that drew on a memory, as the conversations keep it."""

    @property
    def created_at(self) -> datetime:
        """When the reply was stored."""

    @property
    def excerpt(self) -> str:
        """The reply's first words, on one line."""


class Citations(Protocol):
    """Reads which of the owner's replies drew on a memory (the chat's "Based on" sources)."""

    async def citing(self, owner_id: int, memory_id: str, limit: int) -> Sequence[CitingReply]:
        """Return the owner's newest replies that drew on the memory, newest first."""


@dataclass(frozen=True)
class AppServices:
    """The services the Mini App changes memory and reminders through."""

    memory_control: MemoryControl
    batches: BatchStore
    reminders: ReminderTools
    default_zone: str
    announcer: Announcer
    citations: Citations

    async def zone(self, owner_id: int) -> ZoneInfo:
        """Return the owner's time zone: theirs if set, else the bot's."""
        return ZoneInfo(await self.reminders.store.zone_of(owner_id) or self.default_zone)


SERVICES = web.AppKey("services", AppServices)
LIST_CACHE = web.AppKey("list_cache", ListCache)


def services_of(request: web.Request) -> tuple[AppServices, int]:
    """Return the services and the signed-in owner of an API request."""
    return request.app[SERVICES], request[OWNER]
