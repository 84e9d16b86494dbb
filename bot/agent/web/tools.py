"""The Messages API's own web tools, web_search and web_fetch: their definitions and limits.

The API runs both on its side (no scraper, no other key): Claude decides when to search, and
fetches a page it was given or found. The versions are the basic ones the installed SDK types
as generally available, web_search_20250305 and web_fetch_20250910: they need no beta header,
work with every current model, and return only the blocks stored here. The later versions
(20260209 and on) add "dynamic filtering", which runs the API's code execution tool and brings
its own blocks, costs and model limits; the bot does not need it.
"""

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from anthropic import BadRequestError
from anthropic.types import ToolUnionParam, WebFetchTool20250910Param, WebSearchTool20250305Param

logger = logging.getLogger(__name__)

WEB_SEARCH: Final = "web_search"
WEB_FETCH: Final = "web_fetch"
WEB_TOOL_NAMES = (WEB_SEARCH, WEB_FETCH)
SEARCH_TYPE: Final = "web_search_20250305"
FETCH_TYPE: Final = "web_fetch_20250910"
# A fetched page goes into the context up to about this many tokens (the API cuts the rest).
FETCH_MAX_CONTENT_TOKENS = 8_000
# How a 400 names a web tool it refuses (disabled for the organisation, unsupported model).
_NAMES_A_WEB_TOOL = re.compile(r"\bweb[_ ](search|fetch)\b", re.IGNORECASE)


@dataclass(frozen=True)
class WebConfig:
    """Whether the web tools are offered, and how many uses a turn and an owner's day get."""

    enabled: bool = True
    uses_per_turn: int = 5
    uses_per_day: int = 50


def split_uses(per_answer: int) -> tuple[int, int]:
    """Return each call's max_uses of web_search and web_fetch: the same on every call.

    The API's max_uses counts each tool on its own and sits in the tool definitions, the
    cached prefix of every request, so it never changes with what is left (the code counts
    that, bot/agent/web/turn.py): the larger half searches, the smaller reads, one at least.
    """
    return per_answer - per_answer // 2, max(1, per_answer // 2)


def web_tool_definitions(searches: int, reads: int, zone: str | None) -> list[ToolUnionParam]:
    """Return web_search then web_fetch, each at most its uses in one call.

    The owner's zone, when known, is the search's approximate location (the API takes an
    IANA zone); nothing else about the user is sent.
    """
    search: WebSearchTool20250305Param = {
        "type": SEARCH_TYPE,
        "name": WEB_SEARCH,
        "max_uses": searches,
    }
    if zone:
        search["user_location"] = {"type": "approximate", "timezone": zone}
    fetch: WebFetchTool20250910Param = {
        "type": FETCH_TYPE,
        "name": WEB_FETCH,
        "max_uses": reads,
        # Citations let a reply cite the page it read, and so show it among the sources.
        "citations": {"enabled": True},
        "max_content_tokens": FETCH_MAX_CONTENT_TOKENS,
    }
    return [search, fetch]


def web_tool_name(tool: Mapping[str, object]) -> str | None:
    """Return the name of a tool definition if it is one of the web tools, else None."""
    name = tool.get("name")
    if name in WEB_TOOL_NAMES and tool.get("type") in (SEARCH_TYPE, FETCH_TYPE):
        return str(name)
    return None


def refuses_web_tools(error: BadRequestError) -> bool:
    """Tell whether the API refused the request because of a web tool it does not allow."""
    body = error.body if isinstance(error.body, dict) else {}
    details = body.get("error")
    message = str(details.get("message") if isinstance(details, dict) else error.message)
    return "prompt is too long" not in message and bool(_NAMES_A_WEB_TOOL.search(message))


def domain_of(url: str) -> str:
    """Return a URL's host without a leading www., or the URL itself if it has none."""
    host = urlsplit(url).hostname or ""
    return host.removeprefix("www.") or url


def subject_of(name: str, tool_input: object) -> str | None:
    """Return what a web tool call is about: the query searched, or the domain read."""
    if not isinstance(tool_input, dict):
        return None
    if name == WEB_SEARCH and isinstance(query := tool_input.get("query"), str):
        return query.strip() or None
    if name == WEB_FETCH and isinstance(url := tool_input.get("url"), str):
        return domain_of(url)
    return None
