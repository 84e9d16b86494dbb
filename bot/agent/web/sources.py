"""The web pages a reply rests on: the search results it cites and the pages it read.

The API's terms ask that citations of web results be shown to the user; the Telegram layer
lists these after the reply.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from anthropic.types import ContentBlock


@dataclass(frozen=True)
class WebSource:
    """A page: its title as the web gave it (may be empty) and its address."""

    title: str
    url: str


def _key(url: str) -> str:
    """Return the URL a page is known by: without its fragment or a trailing slash."""
    parts = urlsplit(url.strip())
    return urlunsplit(parts._replace(fragment="")).rstrip("/")


def _found(content: Sequence[ContentBlock]) -> Iterable[WebSource]:
    """Yield the response's cited search results and read pages, in the order they come."""
    for block in content:
        if block.type == "text":
            for citation in block.citations or []:
                if citation.type == "web_search_result_location":
                    yield WebSource(citation.title or "", citation.url)
        elif block.type == "web_fetch_tool_result" and block.content.type == "web_fetch_result":
            yield WebSource(block.content.content.title or "", block.content.url)


def web_sources(
    content: Sequence[ContentBlock], known: Sequence[WebSource] = ()
) -> list[WebSource]:
    """Return known, then the response's new sources: each page once, its first title kept."""
    sources = list(known)
    seen = {_key(source.url) for source in sources}
    for source in _found(content):
        if source.url and _key(source.url) not in seen:
            seen.add(_key(source.url))
            sources.append(source)
    return sources
