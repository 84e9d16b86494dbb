"""FakeAnthropic streams replies the way the real API does, as the real SDK reads them."""

import asyncio
import json
import time

import aiohttp
import anthropic
import httpx2
import pytest

from tests.fakes.anthropic_server import (
    FakeAnthropic,
    drop_mid_stream,
    error,
    fail_mid_stream,
    paced,
    reply,
    stream_steps,
    text,
    tool_use,
)
from tests.wire.requests import MODEL, ask

STORY = "Once upon a time there was a bot that remembered everything it was told. " * 4


async def streamed_texts(claude, **request):
    """Stream a request with messages.stream; return the text pieces and the final message."""
    async with claude.messages.stream(**request) as stream:
        pieces = [piece async for piece in stream.text_stream]
        return pieces, await stream.get_final_message()


async def test_streamed_text_arrives_in_pieces_and_ends_as_the_scripted_reply(fa, claude):
    fa.script(text(STORY, stop_reason="max_tokens"), text(STORY, stop_reason="max_tokens"))
    pieces, final = await streamed_texts(claude, **ask())
    assert len(pieces) > 10 and max(len(p) for p in pieces) <= 16
    assert "".join(pieces) == STORY
    assert [b.text for b in final.content] == [STORY] and final.stop_reason == "max_tokens"
    plain = await claude.messages.create(**ask())
    assert final.usage.input_tokens == plain.usage.input_tokens > 0
    assert final.usage.output_tokens == plain.usage.output_tokens > 1
    assert fa.requests[0]["stream"] is True and "stream" not in fa.requests[1]


async def test_streamed_tool_use_gives_the_scripted_input_and_stop_reason(fa, claude):
    arguments = {"fact": "likes green tea with honey", "tags": ["food", "drink"], "n": 2}
    fa.script(tool_use("remember", arguments, id="toolu_1", text="Saving."))
    async with claude.messages.stream(**ask()) as stream:
        json_pieces = [e.partial_json async for e in stream if e.type == "input_json"]
        final = await stream.get_final_message()
    assert json_pieces[0] == "" and len(json_pieces) > 2
    assert json.loads("".join(json_pieces)) == arguments
    assert final.stop_reason == "tool_use"
    assert [b.type for b in final.content] == ["text", "tool_use"]
    call = final.content[1]
    assert (call.id, call.name, call.input) == ("toolu_1", "remember", arguments)


async def test_raw_events_follow_the_api_order_and_shapes(fa, claude):
    fa.script(tool_use("recall", {}, text="Let me look."))
    stream = await claude.messages.create(**ask(), stream=True)
    events = [event async for event in stream]
    kinds = [e.type for e in events]
    assert kinds[:3] == ["message_start", "content_block_start", "content_block_delta"]
    assert kinds[-4:] == [
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = events[0].message
    assert start.content == [] and start.stop_reason is None and start.usage.output_tokens == 1
    tool_start = [e for e in events if e.type == "content_block_start"][1]
    assert tool_start.index == 1 and tool_start.content_block.input == {}
    delta = events[-2]
    assert delta.delta.stop_reason == "tool_use" and delta.usage.output_tokens > 1
    assert delta.usage.input_tokens == start.usage.input_tokens


async def test_wire_format_is_server_sent_events_with_a_ping(fa):
    fa.script(text("Hi there"))
    headers = {"x-api-key": fa.api_key, "anthropic-version": "2023-06-01"}
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{fa.base_url}/v1/messages", json=ask(stream=True), headers=headers) as r,
    ):
        assert r.headers["content-type"].startswith("text/event-stream")
        raw = (await r.read()).decode()
    frames = [frame for frame in raw.split("\n\n") if frame]
    for frame in frames:
        event, data = frame.split("\n")
        assert event.startswith("event: ") and data.startswith("data: ")
        assert json.loads(data.removeprefix("data: "))["type"] == event.removeprefix("event: ")
    names = [frame.split("\n")[0].removeprefix("event: ") for frame in frames]
    assert names[:3] == ["message_start", "content_block_start", "ping"]


async def test_cache_accounting_is_the_same_when_streamed():
    system = [{"type": "text", "text": "fact " * 3000, "cache_control": {"type": "ephemeral"}}]
    async with (
        FakeAnthropic(cache_emulation=True) as fa,
        anthropic.AsyncAnthropic(api_key=fa.api_key, base_url=fa.base_url, max_retries=0) as c,
    ):
        _, first = await streamed_texts(c, **ask(system=system))
        _, second = await streamed_texts(c, **ask(system=system))
    assert first.usage.cache_creation_input_tokens > 1024
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0


async def test_paced_reply_waits_then_spreads_the_text(fa, claude):
    fa.script(text(STORY, first_delay=0.4, duration=0.6))
    started = time.monotonic()
    arrivals = []
    async with claude.messages.stream(**ask()) as stream:
        async for _ in stream.text_stream:
            arrivals.append(time.monotonic() - started)
    assert 0.4 <= arrivals[0] < 0.9
    assert 0.5 <= arrivals[-1] - arrivals[0] < 1.2
    # The pieces are spread out, not sent in one burst at the end.
    middle = arrivals[len(arrivals) // 2] - arrivals[0]
    assert 0.15 < middle < 0.5


async def test_paced_reply_without_streaming_takes_the_whole_time(fa, claude):
    fa.script(paced(text("slow"), first_delay=0.2, duration=0.3))
    started = time.monotonic()
    message = await claude.messages.create(**ask())
    assert time.monotonic() - started >= 0.5 and message.content[0].text == "slow"


async def test_concurrent_streams_count_as_in_flight(fa, claude):
    fa.script(paced("one", duration=0.3, first_delay=0.2), paced("two", first_delay=0.2))
    await asyncio.gather(streamed_texts(claude, **ask()), streamed_texts(claude, **ask()))
    assert fa.max_in_flight == 2 and fa.in_flight == 0


async def test_error_event_mid_stream_raises_api_status_error(fa, claude):
    fa.script(fail_mid_stream(STORY, after=30))
    received = []
    with pytest.raises(anthropic.APIStatusError) as caught:
        async with claude.messages.stream(**ask()) as stream:
            async for piece in stream.text_stream:
                received.append(piece)
    assert "".join(received) == STORY[:30]
    error_raised = caught.value
    # The HTTP status was 200, so the SDK raises the base class, not OverloadedError: product
    # code must catch APIStatusError and read .type.
    assert not isinstance(error_raised, anthropic.InternalServerError)
    assert error_raised.status_code == 200 and error_raised.type == "overloaded_error"
    assert error_raised.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


async def test_mid_stream_failure_without_streaming_is_an_http_error(fa, claude):
    fa.script(fail_mid_stream("x"), fail_mid_stream("x", type="api_error", message="Internal"))
    with pytest.raises(anthropic.OverloadedError):
        await claude.messages.create(**ask())
    with pytest.raises(anthropic.InternalServerError, match="Internal"):
        await claude.messages.create(**ask())


async def test_dropped_stream_raises_the_transport_error_unwrapped(fa, claude):
    fa.script(drop_mid_stream(STORY, after=20), drop_mid_stream(STORY))
    received = []
    # The SDK does not wrap errors while reading the body: httpx2's error reaches the caller.
    with pytest.raises(httpx2.RemoteProtocolError):
        async with claude.messages.stream(**ask()) as stream:
            async for piece in stream.text_stream:
                received.append(piece)
    assert "".join(received) == STORY[:20]
    with pytest.raises(httpx2.TransportError):
        async with claude.messages.stream(**ask()) as stream:
            await stream.get_final_message()


async def test_dropped_connection_without_streaming_is_a_connection_error(fa, claude):
    fa.script(drop_mid_stream("x"))
    with pytest.raises(anthropic.APIConnectionError):
        await claude.messages.create(**ask())


async def test_refusals_come_before_the_stream_starts(fa, claude):
    fa.script(error(529, "overloaded_error", "Overloaded"))
    with pytest.raises(anthropic.OverloadedError):
        async with claude.messages.stream(**ask()) as stream:
            await stream.get_final_message()
    with pytest.raises(anthropic.BadRequestError, match="non-whitespace"):
        async with claude.messages.stream(**ask("  ")) as stream:
            await stream.get_final_message()
    assert fa.remaining() == 0 and len(fa.invalid) == 1


def test_failure_cuts_exactly_after_the_given_characters():
    message = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
        "content": [{"type": "text", "text": "abcdefghij" * 5}], "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 5, "output_tokens": 9, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }  # fmt: skip
    steps = stream_steps(message, fail_mid_stream(reply(message["content"]), after=21))
    deltas = [s["delta"]["text"] for s in steps if s and s["type"] == "content_block_delta"]
    assert "".join(deltas) == "abcdefghij" * 2 + "a"
    assert steps[-1]["type"] == "error"
    whole = stream_steps(message, drop_mid_stream(reply(message["content"])))
    assert whole[-1] is None and whole[-2]["type"] == "content_block_stop"
