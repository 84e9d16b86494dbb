"""The web tools within their limits: uses a turn and an owner's day, off when refused.

A cap counts searches and page reads together. The API's max_uses is per tool and per call,
so each call offers the tools a share of what is left whose sum is never more (split_uses),
and what a call used, as the API's usage counts it, comes off before the next call; a tool
with no share is not offered, and its blocks in the history go as text.
"""

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, tzinfo

from anthropic import BadRequestError
from anthropic.types import (
    Message,
    ToolUnionParam,
    WebFetchToolResultErrorBlock,
    WebSearchToolResultErrorObject,
)

from bot.agent.web.tools import WebConfig, refuses_web_tools, split_uses, web_tool_definitions
from bot.conversations.snapshot import StoredTurn
from bot.conversations.web_uses import WebUses
from memory.models import utcnow

logger = logging.getLogger(__name__)

ZoneOf = Callable[[int], Awaitable[str | None]]
_LINK = re.compile(r"https?://", re.IGNORECASE)


@dataclass
class WebBudget:
    """One turn's web uses: whose, on which day, how many are left, and where the owner is."""

    owner_id: int
    day: date
    left: int
    zone: str | None
    wants_page: bool = False  # the user's message holds a link: reading gets the larger share


def _holds_link(turns: Sequence[StoredTurn]) -> bool:
    """Tell whether the newest user message holds a web link."""
    newest = next((t for t in reversed(turns) if t.role == "user"), None)
    texts = (b["text"] for b in newest.content if b["type"] == "text") if newest else ()
    return any(_LINK.search(text) for text in texts)


def _result_errors(message: Message) -> list[str]:
    """Return the error codes of the message's web tool results."""
    codes: list[str] = []
    for block in message.content:
        if block.type in ("web_search_tool_result", "web_fetch_tool_result"):
            content = block.content
            if isinstance(content, WebSearchToolResultErrorObject | WebFetchToolResultErrorBlock):
                codes.append(content.error_code)
    return codes


class WebTools:
    """Offers web_search and web_fetch to a turn within its limits, and counts what it used."""

    def __init__(
        self,
        config: WebConfig,
        uses: WebUses,
        zone_of: ZoneOf,
        zone: tzinfo,
        clock: Callable[[], datetime] = utcnow,
    ):
        self._config, self._uses, self._zone_of = config, uses, zone_of
        self._zone, self._clock = zone, clock
        self._refused = False  # the API refused them: off until the bot restarts
        self._logged: set[str] = set()  # the result errors already logged

    async def budget(self, owner_id: int, turns: Sequence[StoredTurn] = ()) -> WebBudget | None:
        """Return a new turn's budget: the turn's uses, less what the day has left; or None."""
        if not self._config.enabled or self._refused:
            return None
        day = self._clock().astimezone(self._zone).date()
        used = await self._uses.on(owner_id, day)
        left = min(self._config.uses_per_turn, self._config.uses_per_day - used)
        zone = await self._zone_of(owner_id)
        return WebBudget(owner_id, day, left, zone, _holds_link(turns))

    def definitions(self, budget: WebBudget | None) -> list[ToolUnionParam]:
        """Return the web tools for the turn's next call, their uses summing to what is left."""
        if budget is None or budget.left <= 0 or self._refused:
            return []
        searches, reads = split_uses(budget.left, budget.wants_page)
        return web_tool_definitions(searches, reads, budget.zone)

    async def record(self, budget: WebBudget | None, message: Message) -> None:
        """Count the call's searches and fetches against the turn and the owner's day."""
        if budget is None:
            return
        for code in _result_errors(message):
            if code not in self._logged and code != "max_uses_exceeded":
                self._logged.add(code)
                logger.warning("a web tool failed with %s; the model answers without it", code)
        used = message.usage.server_tool_use
        if used is None:
            return
        budget.left -= used.web_search_requests + used.web_fetch_requests
        await self._uses.add(
            budget.owner_id, budget.day, used.web_search_requests, used.web_fetch_requests
        )

    def refuse(self, error: BadRequestError) -> bool:
        """Turn the web tools off if the API refused them; tell whether it did (log it once)."""
        if self._refused or not self._config.enabled or not refuses_web_tools(error):
            return False
        self._refused = True
        logger.warning(
            "the API refused the web tools (%s); answering without them until the bot restarts",
            error.message,
        )
        return True
