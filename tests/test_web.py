"""Web search and links, end to end: the API's server tools, sources shown, replay, limits."""

import json
import logging

import pytest
import sqlalchemy as sa

from bot.agent.web.tools import FETCH_TYPE, SEARCH_TYPE
from bot.agent.web.turn import USED_UP
from bot.telegram.format import MAX_MESSAGE_LENGTH
from bot.telegram.texts import tool_status
from tests.fakes.anthropic_server import Reply, paced, text, tool_use
from tests.fakes.anthropic_web import cited, paused_search, search_result, web_fetch, web_search
from tests.fakes.telegram_server import utf16_len
from tests.harness import OWNER

PHARMACY = search_result(
    "Main Street Pharmacy: opening hours", "https://www.mainst-pharmacy.com/hours"
)
CITY = search_result("Pharmacies in town [list]", "https://city.example.org/pharmacies#late")
QUESTION = "what time does the pharmacy on Main Street close today?"
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


def pharmacy_reply() -> Reply:
    """Return a searched, cited answer as the API sends one: text split at its citations."""
    return Reply(
        [
            {"type": "text", "text": "I'll look that up."},
            *web_search("Main Street pharmacy hours", [PHARMACY, CITY]),
            {"type": "text", "text": "The pharmacy on Main Street "},
            cited("closes at 9 pm today", PHARMACY),
            {"type": "text", "text": ", and "},
            cited("it is the only late one", CITY),
            {"type": "text", "text": " (they "},
            cited("open at 8", PHARMACY),
            {"type": "text", "text": ")."},
        ]
    )


def web_tools_of(request: dict) -> list[dict]:
    """Return the web tools a request offered."""
    return [t for t in request.get("tools") or [] if t["name"] in ("web_search", "web_fetch")]


async def test_a_search_is_answered_with_its_sources_and_replayed_after_a_restart(harness):
    model = harness.model
    model.script(pharmacy_reply())
    [reply] = await harness.say(OWNER, QUESTION)
    assert reply == (
        "I'll look that up.\n\n"
        "The pharmacy on Main Street closes at 9 pm today, and it is the only late one "
        "(they open at 8).\n\n"
        "Sources\n"
        "• Main Street Pharmacy: opening hours (mainst-pharmacy.com)\n"
        "• Pharmacies in town (list) (city.example.org)"
    )
    links = [
        e["url"] for e in harness.tg.sent[-1]["result"]["entities"] if e["type"] == "text_link"
    ]
    assert links == [PHARMACY["url"], CITY["url"]]
    # The tools: the memory and reminder tools, then web_search and web_fetch, last.
    tools = model.requests[0]["tools"]
    assert [t["name"] for t in tools[-2:]] == ["web_search", "web_fetch"]
    assert [t["type"] for t in tools[-2:]] == [SEARCH_TYPE, FETCH_TYPE]
    assert "user_location" not in tools[-2]  # the owner's zone is not known yet
    sent = model.requests[0]
    assert not any(h.get("anthropic-beta") for h in model.request_headers)

    await harness.restart()
    model.script(text("You're welcome."))
    await harness.say(OWNER, "thanks")
    replayed = model.requests[-1]["messages"]
    assistant = [m for m in replayed if m["role"] == "assistant"][-1]["content"]
    blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in assistant]
    # Sent back exactly as the API sent them: calls, encrypted results, cited texts.
    assert blocks == model.answers[0]["content"]
    assert model.invalid == []
    assert sent["tools"] == model.requests[-1]["tools"]  # the same tools, cached alike


async def test_a_link_the_user_sends_is_read_and_shown_as_the_source(harness):
    url = "https://news.example.com/2026/11/article"
    harness.model.script(
        Reply(
            [
                *web_fetch(url, "Rates held steady", "The central bank held rates at 3%."),
                {"type": "text", "text": "The article says the central bank held rates at 3%."},
            ]
        )
    )
    [reply] = await harness.say(OWNER, f"summarise this: {url}")
    assert reply.endswith("Sources\n• Rates held steady (news.example.com)")
    # A page the conversation never showed cannot be fetched: no source to show.
    harness.model.script(
        Reply(
            [
                *web_fetch("https://elsewhere.example.net/x", "Other"),
                {"type": "text", "text": "I couldn't read it."},
            ]
        )
    )
    [reply] = await harness.say(OWNER, "and the other one?")
    assert reply == "I couldn't read it."
    result = harness.model.answers[-1]["content"][1]["content"]
    assert result == {
        "type": "web_fetch_tool_result_error",
        "error_code": "url_not_in_prior_context",
    }


async def test_a_paused_turn_is_continued_not_cut(harness):
    model = harness.model
    call = paused_search("Main Street pharmacy hours")
    model.script(
        Reply([{"type": "text", "text": "Searching."}, *call], stop_reason="pause_turn"),
        Reply(
            [
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": call[0]["id"],
                    "content": [PHARMACY],
                },
                cited("It closes at 9 pm.", PHARMACY),
            ]
        ),
    )
    [reply] = await harness.say(OWNER, QUESTION)
    assert reply.startswith("Searching.\n\nIt closes at 9 pm.\n\nSources\n")
    assert len(model.requests) == 2
    # The paused content went back as the last, assistant, message, for the API to go on.
    last = model.requests[1]["messages"][-1]
    assert last["role"] == "assistant"
    assert last["content"][-1]["type"] == "server_tool_use"
    assert model.invalid == []
    # Later turns get the call and its result together, in one assistant message.
    model.script(text("Bye."))
    await harness.say(OWNER, "ok")
    assistant = next(m for m in model.requests[-1]["messages"] if m["role"] == "assistant")
    assert [b["type"] for b in assistant["content"]] == [
        "text", "server_tool_use", "web_search_tool_result", "text",
    ]  # fmt: skip


async def test_a_refused_web_tool_is_logged_once_and_the_turn_still_answered(harness, caplog):
    model = harness.model
    model.web_refusal = "web_search is not enabled for this organization"
    model.script(text("It usually closes at 9, but I can't check today's hours."), text("Sure."))
    with caplog.at_level(logging.WARNING, logger="bot.agent.web.turn"):
        [reply] = await harness.say(OWNER, QUESTION)
        await harness.say(OWNER, "ok")
    assert reply.startswith("It usually closes at 9")
    refusals = [r for r in caplog.records if "refused the web tools" in r.getMessage()]
    assert len(refusals) == 1
    assert [web_tools_of(r) != [] for r in model.requests] == [True, False, False]


async def test_a_failed_search_is_logged_once_and_answered_without_it(harness, caplog):
    model = harness.model
    failing = Reply(
        [*web_search("pharmacy hours", "unavailable"), {"type": "text", "text": "Search is down."}]
    )
    model.script(
        failing,
        Reply([*web_search("again", "unavailable"), {"type": "text", "text": "Still down."}]),
    )
    with caplog.at_level(logging.WARNING, logger="bot.agent.web.turn"):
        assert await harness.say(OWNER, QUESTION) == ["Search is down."]
        assert await harness.say(OWNER, "try again") == ["Still down."]
    assert len([r for r in caplog.records if "unavailable" in r.getMessage()]) == 1


PAGES = ("https://mainst-pharmacy.example.com/hours", "https://city.example.org/late")


def greedy(*queries: str, reads: tuple[str, ...] = (), then: str = "It closes at 9.") -> Reply:
    """Return a reply that searches for each query and reads each page, then answers."""
    blocks = [b for q in queries for b in web_search(q, [PHARMACY])]
    blocks += [b for url in reads for b in web_fetch(url, "Hours", "Open 8 to 21.")]
    return Reply([*blocks, cited(then, PHARMACY)])


def made(answer: dict) -> list[str]:
    """Return the web uses the API ran for a message: each tool's name, errors left out."""
    results = {
        b["tool_use_id"]: b["content"]
        for b in answer["content"]
        if b["type"] in ("web_search_tool_result", "web_fetch_tool_result")
    }
    return [
        b["name"]
        for b in answer["content"]
        if b["type"] == "server_tool_use" and "error_code" not in results[b["id"]]
    ]


@pytest.mark.engines
async def test_one_cap_covers_searches_and_reads_together_per_answer_and_per_day(start_bot):
    bot = await start_bot(web_uses_per_turn=2, web_uses_per_day=3)
    model = bot.model
    # A model that tries two searches and two page reads in one call makes two in all.
    model.script(greedy("one", "two", reads=PAGES))
    await bot.say(OWNER, f"are these open late? {PAGES[0]} {PAGES[1]}")
    assert made(model.answers[0]) == ["web_search", "web_fetch"]
    assert [(t["name"], t["max_uses"]) for t in web_tools_of(model.requests[0])] == [
        ("web_search", 1), ("web_fetch", 1),
    ]  # fmt: skip
    # The day has one use left: the tools are sent as before (the cached prefix holds), and
    # the API's max_uses stops the second search of the call.
    model.script(greedy("three", "four"))
    await bot.say(OWNER, "and tomorrow?")
    assert model.requests[1]["tools"] == model.requests[0]["tools"]
    assert made(model.answers[1]) == ["web_search"]
    # The day's three are spent: no web tools, and the history's web blocks told as text.
    model.script(text("I can't search any more today."))
    await bot.say(OWNER, "and Sunday?")
    assert web_tools_of(model.requests[2]) == []
    types = {b["type"] for m in model.requests[2]["messages"] for b in m["content"]}
    assert not types & {"server_tool_use", "web_search_tool_result"}
    assert model.invalid == [] and model.unoffered == []
    async with bot.services.engine.connect() as connection:
        used = await connection.execute(sa.text("SELECT searches, fetches FROM web_uses"))
        assert [tuple(row) for row in used] == [(2, 1)]
    # A restart keeps the count: it is in the database.
    await bot.restart()
    model.script(text("Still none."))
    await bot.say(OWNER, "please?")
    assert web_tools_of(model.requests[3]) == []


async def test_the_tools_stay_byte_identical_and_a_spent_answer_is_told_in_the_results(
    start_bot,
):
    bot = await start_bot(web_uses_per_turn=2)
    model = bot.model
    # One call searches and reads (the answer's two uses), and looks in memory too.
    looked_up = tool_use("search_memory", {"query": "pharmacy"}).content
    first = Reply([*greedy("one", reads=PAGES[:1]).content[:-1], *looked_up], "tool_use")
    model.script(first, text("It closes at 9."))
    await bot.say(OWNER, f"when does it close? {PAGES[0]}")
    # The next call of the same answer is told the web is spent, in the stored tool results.
    results = model.requests[1]["messages"][-1]["content"]
    assert results[-1]["text"] == USED_UP
    model.script(text("Fine."), text("Sure."))
    await bot.say(OWNER, "thanks")
    await bot.say(OWNER, "and tomorrow?")
    tools = [json.dumps(r["tools"], sort_keys=False) for r in model.requests]
    assert len(model.requests) == 4 and len(set(tools)) == 1
    assert model.invalid == [] and model.unoffered == []


async def test_web_tools_off_offers_none(start_bot):
    bot = await start_bot(web_tools=False)
    bot.model.script(text("I can't browse."))
    assert await bot.say(OWNER, QUESTION) == ["I can't browse."]
    assert web_tools_of(bot.model.requests[0]) == []


async def test_the_owners_zone_is_the_searchs_approximate_location(harness):
    await harness.services.reminders.store.set_zone(OWNER, "Europe/Berlin")
    harness.model.script(text("Let me see."))
    await harness.say(OWNER, QUESTION)
    search = web_tools_of(harness.model.requests[0])[0]
    assert search["user_location"] == {"type": "approximate", "timezone": "Europe/Berlin"}


@SQLITE_ONLY
async def test_a_long_cited_reply_is_split_and_ends_with_its_sources(harness):
    story = " ".join(f"Sentence {i} about the pharmacy and its long history." for i in range(150))
    harness.model.script(
        Reply(
            [
                *web_search("pharmacy history", [PHARMACY, CITY]),
                cited(story, PHARMACY),
                cited(" More.", CITY),
            ]
        )
    )
    replies = await harness.say(OWNER, "tell me the pharmacy's history")
    assert len(replies) >= 2
    assert all(utf16_len(r) <= MAX_MESSAGE_LENGTH for r in replies)
    assert replies[-1].endswith("• Pharmacies in town (list) (city.example.org)")
    assert "".join(replies).count("Sources") == 1


@SQLITE_ONLY
async def test_the_draft_says_what_is_searched(harness):
    harness.model.script(paced(pharmacy_reply(), first_delay=0.1, duration=4.0))
    await harness.say(OWNER, QUESTION)
    drafts = harness.tg.drafts_to(OWNER)
    assert any(d.endswith("Searching the web: Main Street pharmacy hours…") for d in drafts), drafts


def test_web_statuses_name_the_query_or_the_domain():
    assert tool_status("web_search") == "<i>Searching the web…</i>"
    assert (
        tool_status("web_search", "<b>x</b>") == "<i>Searching the web: &lt;b&gt;x&lt;/b&gt;…</i>"
    )
    assert tool_status("web_fetch", "example.com") == "<i>Reading example.com…</i>"


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
INVISIBLE = "\u200b\u2060\ufeff\U000e0041"  # zero-width space, word joiner, BOM, a tag


async def test_bidi_and_invisible_characters_of_a_page_never_reach_the_sources_list(harness):
    hostile = search_result(
        f"Pharmacy {BIDI[4]}gpj.exe{BIDI[8]} hours{BIDI}{INVISIBLE}",
        f"https://pharmacy.example.org/{BIDI[4]}hours",
    )
    bare = search_result(f"{BIDI}{INVISIBLE}", "https://late.example.org/")
    harness.model.script(
        Reply(
            [
                *web_search("pharmacy", [hostile, bare]),
                cited("Open till 9.", hostile),
                cited(" Or late.", bare),
            ]
        )
    )
    [answer] = await harness.say(OWNER, QUESTION)
    assert not set(answer) & set(BIDI + INVISIBLE), ascii(answer)
    assert "• Pharmacy gpj.exe hours (pharmacy.example.org)" in answer
    assert "• late.example.org (late.example.org)" in answer  # a title of nothing but them
    [sent] = [m["result"] for m in harness.tg.sent if m["chat_id"] == OWNER]
    links = [e["url"] for e in sent["entities"] if e["type"] == "text_link"]
    assert links[0] == "https://pharmacy.example.org/%E2%80%AEhours"
