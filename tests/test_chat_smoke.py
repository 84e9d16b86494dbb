"""The bot answers a message through the model, end to end."""

import pytest

from tests.fakes.anthropic_server import text
from tests.harness import OWNER


@pytest.mark.engines
async def test_answers_a_message(harness):
    harness.model.script(text("Hello **there**!"))
    replies = await harness.say(OWNER, "hi")
    assert replies == ["Hello there!"]
    request = harness.model.requests[0]
    assert request["messages"][-1]["content"][-1]["text"].endswith("\nhi")
