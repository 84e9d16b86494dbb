"""The sources a reply that used the web ends with: links, titled, with their domains."""

import re
from urllib.parse import quote

from bot.agent.web.sources import WebSource
from bot.agent.web.tools import domain_of
from bot.telegram.format import visible_text
from memory.text import shorten

SOURCES_HEADING = "**Sources**"
# A list past this many would bury the reply; the pages cited first are kept.
MAX_SOURCES = 12
MAX_TITLE_CHARS = 90
# What Markdown would read as formatting inside a link's text.
_MARKUP = re.compile(r"([\\`*_~])")
# Characters a URL keeps as they are; the rest (spaces, parentheses) are percent-encoded,
# so the link's Markdown cannot end early.
_URL_SAFE = ":/?#@!$&'*+,;=%-._~"


def _title(source: WebSource) -> str:
    """Return the source's title as link text: one line, visible, no brackets, markup escaped."""
    title = " ".join(visible_text(source.title).split()) or _domain(source)
    title = shorten(title, MAX_TITLE_CHARS).replace("[", "(").replace("]", ")")
    return _MARKUP.sub(r"\\\1", title)


def _domain(source: WebSource) -> str:
    """Return the source's domain as shown: without invisible characters."""
    return visible_text(domain_of(source.url))


def source_line(source: WebSource) -> str:
    """Return one source as a Markdown bullet: its linked title, then its domain."""
    # Percent-encoding leaves no invisible character in the link itself.
    url = quote(source.url.strip(), safe=_URL_SAFE)
    domain = _MARKUP.sub(r"\\\1", _domain(source))
    return f"- [{_title(source)}]({url}) ({domain})"


def sources_markdown(sources: list[WebSource]) -> str:
    """Return the sources section for a reply's end, or "" when the reply used no web page."""
    shown = [s for s in sources if s.url.startswith(("https://", "http://"))][:MAX_SOURCES]
    if not shown:
        return ""
    return "\n".join([SOURCES_HEADING, *(source_line(s) for s in shown)])
