"""The message class the SDK names at every stream's event stays cached between streams."""

import asyncio
import gc
import weakref

from anthropic import AsyncAnthropic
from anthropic.lib.streaming import _messages

from bot.agent.stream import stream_message
from tests.fakes.anthropic_server import text


class Unseen:
    """A progress nobody watches."""

    def __init__(self) -> None:
        self.stopped = asyncio.Event()

    def text(self, reply) -> None:
        """Show nothing."""

    def tool(self, name, subject=None) -> None:
        """Show nothing."""


async def test_the_class_a_streams_events_name_outlives_a_full_garbage_collection(fakes):
    _, model = fakes
    model.script(text("Hello"))
    async with AsyncAnthropic(api_key=model.api_key, base_url=model.base_url) as client:
        hi = {
            "model": "claude-test",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "hi"}],
        }
        message = await stream_message(client, hi, Unseen(), [])
    assert message.content[0].text == "Hello"
    named = weakref.ref(_messages.ParsedMessage[_messages.ResponseFormatT])
    gc.collect()
    # Freed, the next stream would build it again: pydantic caches it only weakly.
    assert named() is not None
