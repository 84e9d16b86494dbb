"""The web tools within their limits: uses a turn and an owner's day, off when refused.

A cap counts searches and page reads together, in code. The tool definitions are the first
part of every request's cached prefix, so they are the same on every call of a conversation
(max_uses from the per-answer cap, split_uses): what a call used, as the API's usage counts
it, comes off what the answer and the day have left, and once that is spent the model is told
so in the tool results (USED_UP). Only a day already spent when an answer starts leaves the
tools out (its web blocks in the history then go as text): a hard stop, once a day at most.
"""

import logging
from collections.abc import Callable
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
from bot.conversations.snapshot import WebDay
from bot.conversations.web_uses import WebUses
from memory.models import utcnow

logger = logging.getLogger(__name__)

# Told in the tool results once an answer's (or the day's) web uses are spent.
USED_UP = (
    "[No web searches or page reads are left for this answer: don't call web_search or "
    "web_fetch again; answer with what you have.]"
)


@dataclass
class WebBudget:
    """One turn's web uses: whose, on which day, how many are left, and where the owner is."""

    owner_id: int
    day: date
    left: int
    zone: str | None
    told: bool = False  # the model was told the uses are spent (USED_UP)

    def used_up_note(self) -> str | None:
        """Return USED_UP the first time the answer's uses are spent, else None."""
        if self.left > 0 or self.told:
            return None
        self.told = True
        return USED_UP


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
        zone: tzinfo,
        clock: Callable[[], datetime] = utcnow,
    ):
        self._config, self._uses = config, uses
        self._zone, self._clock = zone, clock
        self._refused = False  # the API refused them: off until the bot restarts
        self._logged: set[str] = set()  # the result errors already logged

    async def budget(self, owner_id: int, known: WebDay | None = None) -> WebBudget | None:
        """Return a new turn's budget: the turn's uses, less what the day has left; or None.

        None (no web tools this answer) when they are off, refused, or the day is spent.
        known is the day's count if read already (with the message); another day's is read.
        """
        if not self._config.enabled or self._refused:
            return None
        day = self._clock().astimezone(self._zone).date()
        if known is None or known.day != day:
            known = await self._uses.day_of(owner_id, day)
        left = min(self._config.uses_per_turn, self._config.uses_per_day - known.used)
        if left <= 0:
            return None
        return WebBudget(owner_id, day, left, known.zone)

    def definitions(self, budget: WebBudget | None) -> list[ToolUnionParam]:
        """Return the web tools, the same on every call while the answer has a budget."""
        if budget is None or self._refused:
            return []
        searches, reads = split_uses(self._config.uses_per_turn)
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
