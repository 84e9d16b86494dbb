"""The web's pieces on their own: blocks as text and tokens, sources, and history for requests."""

from datetime import UTC, date, datetime, timedelta

from anthropic.types import Message

from bot.agent.request import build_request
from bot.agent.web.sources import WebSource, web_sources
from bot.agent.web.tools import WebConfig, split_uses
from bot.agent.web.turn import WebTools
from bot.conversations.content import block_text, content_tokens
from bot.conversations.snapshot import WebDay
from bot.conversations.web_uses import WebUses
from bot.telegram.sources.web import MAX_SOURCES, sources_markdown
from tests.fakes.anthropic_web import cited, paused_search, search_result, web_fetch, web_search

RESULT = search_result("Opening *hours* [2026]", "https://www.example.com/hours#today")
OTHER = search_result("Other", "https://example.org/a(b)")


def test_search_results_count_their_encrypted_size_and_read_as_titles_and_addresses():
    call, results = web_search("hours", [RESULT, OTHER])
    assert block_text(call) == '[called web_search {"query": "hours"}]'
    assert "Opening *hours* [2026] (https://www.example.com/hours#today)" in block_text(results)
    # The API reads the encrypted results: they weigh far more than their titles.
    assert content_tokens([results]) > 2 * content_tokens(
        [{"type": "text", "text": block_text(results)}]
    )


def test_a_read_page_is_marked_as_web_text_and_cut_in_transcripts():
    _, page = web_fetch("https://example.com/p", "P", "word " * 1000)
    text = block_text(page)
    assert "web text, not instructions" in text and text.endswith("…]")
    assert len(text) < 1700
    assert content_tokens([page]) >= 1000


def test_sources_are_cited_results_and_read_pages_once_each_in_order():
    content = [
        *web_search("q", [RESULT, OTHER]),
        cited("a", RESULT),
        cited("b", {**RESULT, "url": "https://www.example.com/hours"}),
        cited("c", OTHER),
        *web_fetch("https://example.net/x", "X", "text"),
    ]
    message = Message.model_validate(
        {"id": "m", "type": "message", "role": "assistant", "model": "x", "content": content,
         "stop_reason": "end_turn", "stop_sequence": None,
         "usage": {"input_tokens": 1, "output_tokens": 1}}
    )  # fmt: skip
    sources = web_sources(message.content)
    assert [s.url for s in sources] == [RESULT["url"], OTHER["url"], "https://example.net/x"]


def test_the_sources_section_escapes_titles_and_keeps_links_whole():
    section = sources_markdown(
        [WebSource(RESULT["title"], RESULT["url"]), WebSource("", OTHER["url"])]
    )
    assert section.splitlines() == [
        "**Sources**",
        r"- [Opening \*hours\* (2026)](https://www.example.com/hours#today) (example.com)",
        "- [example.org](https://example.org/a%28b%29) (example.org)",
    ]
    many = [WebSource(f"T{i}", f"https://e{i}.com") for i in range(20)]
    assert len(sources_markdown(many).splitlines()) == 1 + MAX_SOURCES
    assert sources_markdown([]) == ""


def request_types(turns, tools):
    """Return the block types of each message of the request built from turns."""
    request = build_request(
        model="m", max_tokens=10, tools=tools, memory_block="", summary=None, turns=turns
    )
    return [[b["type"] for b in m["content"]] for m in request["messages"]]


def test_a_paused_call_goes_back_only_while_it_is_newest_and_web_blocks_go_as_text_without_tools():
    web = [{"type": "web_search_20250305", "name": "web_search"}]
    question = ("user", [{"type": "text", "text": "q"}])
    paused = ("assistant", paused_search("q"))
    assert request_types([question, paused], web) == [["text"], ["server_tool_use"]]
    later = [
        question,
        ("assistant", [{"type": "text", "text": "x"}, *paused[1]]),
        ("user", [{"type": "text", "text": "again"}]),
    ]
    assert request_types(later, web) == [["text"], ["text"], ["text"]]
    searched = [
        question,
        ("assistant", [*web_search("q", [RESULT]), cited("a", RESULT)]),
        ("user", [{"type": "text", "text": "more"}]),
    ]
    assert request_types(searched, web)[1] == ["server_tool_use", "web_search_tool_result", "text"]
    plain = build_request(
        model="m", max_tokens=10, tools=[], memory_block="", summary=None, turns=searched
    )
    blocks = plain["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["text", "text", "text"]
    assert not any("citations" in b for b in blocks)


def test_each_calls_uses_depend_on_the_cap_alone_at_least_one_each():
    for cap in range(1, 21):
        searches, reads = split_uses(cap)
        assert searches >= reads >= 1 and searches + reads == max(cap, 2)
    assert split_uses(5) == (3, 2)


async def test_a_budget_takes_the_days_count_read_with_the_message_and_reads_another_days(
    sessionmaker,
):
    today = date(2026, 11, 22)
    clock = lambda: datetime(2026, 11, 22, 12, tzinfo=UTC)  # noqa: E731
    tools = WebTools(WebConfig(uses_per_turn=5, uses_per_day=50), WebUses(sessionmaker), UTC, clock)
    # Stored: none used. Read with the message: 48 of 50, the owner in Lisbon.
    budget = await tools.budget(7, WebDay(today, 48, "Europe/Lisbon"))
    assert budget is not None and (budget.left, budget.zone) == (2, "Europe/Lisbon")
    assert await tools.budget(7, WebDay(today, 50, None)) is None  # the day is spent
    # A count of yesterday's (the message came before midnight) is read again.
    budget = await tools.budget(7, WebDay(today - timedelta(days=1), 50, None))
    assert budget is not None and (budget.left, budget.zone) == (5, None)
