"""Stop in groups, end to end: a Stop button on a short-lived "working" message.

Real PTB and the real SDK over HTTP against the fakes. Only the member who asked may press
it; a press closes the model's stream at once, as Telegram's Stop does in private chats.
"""

import itertools
import time

import pytest

from bot.telegram.chat.group_stop import FINISHED, NOT_YOURS, STOPPING, WORKING
from tests.buttons import buttons
from tests.fakes.anthropic_server import paced, text, tool_use
from tests.harness import FRIEND, OWNER

# None of this depends on the database engine: it runs on one.
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
GROUP = -100321
STORY = " ".join(f"Sentence {i} of a story that goes on for a while." for i in range(60))


_queries = itertools.count(1)


def ask(harness, words: str, *, stop_after: float) -> None:
    """Push a group message from the owner, addressed to the bot; its Stop shows after so long."""
    harness.app.bot_data.services.drafts.groups.delay = stop_after
    said = f"@memory_test_bot {words}"
    harness.tg.push_message(GROUP, said, user_id=OWNER, chat_type="supergroup")


async def tap(harness, message: dict, user_id: int) -> str:
    """Press a message's Stop as a member, without waiting for the answer; return the reply."""
    tg, answered = harness.tg, len(harness.tg.callback_answers)
    [(_, data)] = buttons(message)
    query = {
        "id": f"stop{next(_queries)}",
        "from": {"id": user_id, "is_bot": False, "first_name": "Member"},
        "message": message,
        "chat_instance": f"ci{GROUP}",
        "data": data,
    }
    tg.push_update({"callback_query": query})
    assert await tg._wait_until(lambda: len(tg.callback_answers) > answered, 10.0)
    return tg.callback_answers[answered]["text"]


async def working_message(harness) -> dict:
    """Wait for the working message with its Stop button; return it."""
    [sent] = await harness.tg.wait_for_messages(GROUP, 1, timeout=20.0)
    assert sent["result"]["text"] == WORKING
    message = sent["result"]
    assert [label for label, _ in buttons(message)] == ["Stop"]
    return message


@SQLITE_ONLY
async def test_the_asker_stops_a_group_answer_and_the_stream_closes(harness):
    tg, model = harness.tg, harness.model
    model.script(paced(STORY, first_delay=0.1, duration=20.0))
    ask(harness, "tell me a long story", stop_after=1.0)
    working = await working_message(harness)

    # Another member's press changes nothing.
    assert await tap(harness, working, FRIEND) == NOT_YOURS
    assert model.closed_early == []

    pressed = time.monotonic()
    assert await tap(harness, working, OWNER) == STOPPING
    [closed] = await model.wait_for_close()
    await harness.idle()
    assert closed["at"] - pressed < 1.0  # the stream closed at once
    working_record, reply = tg.sent[-2:]
    # What was written by the press is kept (nothing, if the press came before any text).
    said = reply["result"]["text"].removesuffix("(stopped)")
    assert said != reply["result"]["text"] and STORY.startswith(said.rstrip("\n"))
    assert len(said) < len(STORY) / 2
    # The working message is gone; a press on it now changes nothing.
    assert working_record["result"] == working
    assert tg.deleted == [(GROUP, working["message_id"])]
    assert await tap(harness, working, OWNER) == FINISHED
    assert model.requests[0].get("stream") is True and len(model.requests) == 1


@SQLITE_ONLY
async def test_a_stop_while_the_model_writes_a_tool_call_runs_no_tool(harness):
    tg, model = harness.tg, harness.model
    ships = {"content": "The team ships on Thursdays", "category": "project"}
    model.script(paced(tool_use("add_to_memory", ships, text="Noting it."), duration=20.0))
    ask(harness, "remember we ship on Thursdays", stop_after=1.0)
    working = await working_message(harness)
    assert await tap(harness, working, OWNER) == STOPPING
    await model.wait_for_close()
    await harness.idle()
    assert len(model.requests) == 1 and await harness.store.list_active(GROUP) == []
    assert tg.sent[-1]["result"]["text"].endswith("(stopped)")


@SQLITE_ONLY
async def test_a_quick_group_answer_shows_no_stop(harness):
    harness.model.script(text("Hello, group."))
    ask(harness, "hi", stop_after=30.0)  # the answer ends long before
    await harness.idle()
    assert harness.tg.messages_to(GROUP) == ["Hello, group."] and harness.tg.deleted == []


@SQLITE_ONLY
async def test_stream_replies_off_shows_no_stop_in_groups(start_bot):
    harness = await start_bot(stream_replies=False)
    harness.model.script(paced(STORY, first_delay=0.1, duration=2.0))
    ask(harness, "tell me a story", stop_after=0.1)
    await harness.idle()
    assert harness.tg.messages_to(GROUP) == [STORY]
    assert harness.model.requests[0].get("stream") is None
