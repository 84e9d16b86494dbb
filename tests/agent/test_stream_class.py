"""The message class the SDK names at every stream's event stays cached between streams."""

import gc
import weakref

from anthropic.lib.streaming import _messages

from bot.agent import stream


def test_the_class_each_streams_events_name_outlives_a_full_garbage_collection():
    named = weakref.ref(_messages.ParsedMessage[_messages.ResponseFormatT])
    gc.collect()
    # Freed, the next stream would build it again: pydantic caches it only weakly.
    assert named() is not None
    assert named() is stream._PARAMETRIZED_MESSAGE
