"""Telegram's Stop on drafts and Rich Messages, end to end: real PTB and SDK over HTTP."""

import pytest

from bot.agent.loop import STOPPED_NOTE
from tests.fakes.anthropic_server import paced, text, tool_use
from tests.harness import OWNER

# None of this depends on the database engine: it runs on one.
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
STORY = " ".join(f"Sentence {i} of a story that goes on for a while." for i in range(60))
TEA = {"content": "The user likes green tea", "category": "preference", "subject": "tea"}
TABLE = "Here they are:\n\n| City | People |\n| --- | --- |\n| Lyon | 0.5 M |\n| Nice | 0.3 M |"


async def wait_for_draft(tg, chat_id: int, words: str = "") -> dict:
    """Wait until the chat shows a draft (holding words) with a Stop button; return it."""
    draft = await tg.wait_for_draft(chat_id, words, timeout=20.0)
    assert draft["params"]["can_stop"] is True and draft["params"]["keep_on_stop"] is True
    return draft


def stored_texts(request: dict) -> list[str]:
    """Return the assistant texts of a request's history."""
    return [
        block["text"]
        for message in request["messages"]
        if message["role"] == "assistant"
        for block in message["content"]
        if block["type"] == "text"
    ]


@SQLITE_ONLY
async def test_stop_mid_stream_closes_the_models_stream_and_keeps_what_was_written(harness):
    tg, model = harness.tg, harness.model
    model.script(paced(STORY, first_delay=0.1, duration=20.0))
    tg.push_message(OWNER, "tell me a long story")
    await wait_for_draft(tg, OWNER, "Sentence 3 ")
    tg.press_stop(OWNER)
    [closed] = await model.wait_for_close()
    await harness.idle()
    assert closed["at"] - tg.stops[-1]["at"] < 1.0  # the stream closed at once
    [reply] = tg.messages_to(OWNER)
    said, mark = reply.rsplit("\n\n", 1)
    assert mark == "(stopped)" and STORY.startswith(said) and len(said) < len(STORY) / 2
    # The model knows next time that its answer was cut.
    model.script(text("Sorry, where was I?"))
    assert await harness.say(OWNER, "go on") == ["Sorry, where was I?"]
    [kept] = stored_texts(model.requests[-1])
    assert kept == f"{said}\n\n{STOPPED_NOTE}" and model.invalid == []


@SQLITE_ONLY
async def test_stop_while_the_model_writes_a_tool_call_runs_no_tool(harness):
    tg, model = harness.tg, harness.model
    model.script(paced(tool_use("add_to_memory", TEA, text="Sure."), duration=20.0))
    tg.push_message(OWNER, "remember that I like green tea")
    await wait_for_draft(tg, OWNER, "Saving to memory")
    tg.press_stop(OWNER)
    await model.wait_for_close()
    await harness.idle()
    assert len(model.requests) == 1
    assert await harness.store.list_active(OWNER) == []
    assert tg.messages_to(OWNER) == ["Sure.\n\n(stopped)"]


@SQLITE_ONLY
async def test_a_memory_written_before_the_stop_stays_with_its_undo(harness):
    tg, model = harness.tg, harness.model
    model.script(
        tool_use("add_to_memory", TEA, text="Noting it."),
        paced(STORY, first_delay=0.1, duration=20.0),
    )
    tg.push_message(OWNER, "remember that I like green tea, then tell me a story")
    await wait_for_draft(tg, OWNER, "Sentence 2 ")
    tg.press_stop(OWNER)
    await harness.idle()
    [memory] = await harness.store.list_active(OWNER)
    assert memory.content == TEA["content"]
    reply, notice = tg.sent[-2:]
    assert reply["result"]["text"].endswith("(stopped)")
    assert "Undo" in str(notice["result"]["reply_markup"])


@SQLITE_ONLY
async def test_a_stop_after_the_answer_changes_nothing(harness):
    tg, model = harness.tg, harness.model
    model.script(paced(STORY, first_delay=0.1, duration=1.5))
    assert await harness.say(OWNER, "a story, please") == [STORY]
    draft = tg.drafts[-1]
    update = {"chat": {"id": OWNER, "type": "private"}, "draft_id": draft["draft_id"]}
    tg.push_update({"stopped_message_generation": update})
    await harness.idle()
    assert tg.messages_to(OWNER) == [STORY] and model.closed_early == []
    model.script(text("Fine."))
    assert await harness.say(OWNER, "thanks") == ["Fine."]
    assert stored_texts(model.requests[-1]) == [STORY]


@SQLITE_ONLY
async def test_a_table_arrives_as_one_rich_message_streamed_as_rich_drafts(harness):
    tg, model = harness.tg, harness.model
    model.script(paced(TABLE, first_delay=0.1, duration=2.0))
    assert await harness.say(OWNER, "two cities?") == []  # no plain message
    [blocks] = tg.rich_to(OWNER)
    [table] = [b for b in blocks if b["type"] == "table"]
    assert table["rows"] == [["City", "People"], ["Lyon", "0.5 M"], ["Nice", "0.3 M"]]
    assert any(name == "sendRichMessageDraft" for name, _ in tg.calls)
    assert tg.rejected == [] and OWNER not in tg.shown_drafts


@SQLITE_ONLY
async def test_a_rich_reply_past_the_limits_goes_as_todays_html_split(harness):
    rows = "\n".join(f"| row {i} | {i * i} |" for i in range(600))  # 600 blocks > 500
    harness.model.script(text(f"| n | square |\n| --- | --- |\n{rows}"))
    replies = await harness.say(OWNER, "squares up to 600")
    assert len(replies) >= 2 and "row 599" in replies[-1]
    assert harness.tg.rich == [] and harness.tg.rejected == []


@SQLITE_ONLY
async def test_rich_messages_off_keeps_todays_html(start_bot):
    bot = await start_bot(rich_messages=False)
    bot.model.script(paced(TABLE, first_delay=0.1, duration=1.5))
    [reply] = await bot.say(OWNER, "two cities?")
    assert "Lyon" in reply and bot.tg.rich == []
    assert not any(name.startswith("sendRich") for name, _ in bot.tg.calls)
