"""One chat's backlog never holds up another chat: neither a stranger's flood nor a busy group."""

import json
import re

import pytest

from tests.fakes.anthropic_server import text
from tests.harness import OWNER, STRANGER

GROUP = -100555
# Generous bounds: each reply takes a fraction of a second when nothing holds it back; on
# the code before this test, the reply waited for the other chat's backlog (minutes).
PROMPT_REPLY_SECONDS = 20


@pytest.mark.engines
async def test_an_allowed_chat_is_answered_while_a_stranger_floods_a_group(harness):
    harness.model.default = text("Here you are.")
    # More updates than the bot's 256 concurrent slots, all in one chat of the stranger's.
    for _ in range(300):
        harness.tg.push_message(
            GROUP, "/start", user_id=STRANGER, chat_type="group", first_name="Eve"
        )
    harness.tg.push_message(OWNER, "hello")
    [reply] = await harness.tg.wait_for_messages(OWNER, timeout=PROMPT_REPLY_SECONDS)
    assert reply["result"]["text"] == "Here you are."
    await harness.idle(timeout=60)
    [notice] = harness.tg.messages_to(GROUP)
    assert "private bot" in notice and str(STRANGER) in notice
    assert len(harness.model.requests) == 1


def group_answers(slow: list[bool]):
    """Answer each group question by its number, slowly while slow[0]; private ones at once."""

    def reply(body: dict):
        asked = re.search(r"group question (\d+)", json.dumps(body["messages"][-1]))
        if asked is None:
            return text("private answer")
        return text(f"answer {asked[1]}", first_delay=0.6 if slow[0] else 0.0)

    return reply


@pytest.mark.engines
async def test_a_busy_group_takes_one_slot_and_other_chats_are_answered(start_bot):
    harness = await start_bot(app_options={"max_concurrent_updates": 2})
    slow = [True]
    harness.model.default = group_answers(slow)
    for n in range(10):
        harness.tg.push_message(
            GROUP, f"@memory_test_bot group question {n}", user_id=OWNER, chat_type="supergroup"
        )
    harness.tg.push_message(OWNER, "a private question")
    await harness.tg.wait_for_messages(OWNER, timeout=PROMPT_REPLY_SECONDS)
    # With a slot per queued group message, the private one waited for nine group answers.
    assert len(harness.tg.messages_to(GROUP)) <= 3, harness.tg.messages_to(GROUP)
    slow[0] = False
    await harness.tg.wait_for_messages(GROUP, count=10, timeout=60)
    assert harness.tg.messages_to(GROUP) == [f"answer {n}" for n in range(10)]
    assert harness.tg.messages_to(OWNER) == ["private answer"]
