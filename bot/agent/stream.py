"""Stream a model call, telling whoever shows the reply what it says so far and what it calls."""

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import httpx2
from anthropic import APIStatusError, AsyncAnthropic
from anthropic.lib.streaming import AsyncMessageStream
from anthropic.types import Message
from anthropic.types.message_create_params import MessageCreateParamsBase

from bot.agent.citations import visible_so_far, visible_texts
from bot.agent.web.tools import subject_of

logger = logging.getLogger(__name__)

# A stream that breaks off before any text is asked for again once, after this pause.
RETRY_DELAY_SECONDS = 0.5


@functools.cache
def _hold_parametrized_message() -> object:
    """Return, and so hold, the pydantic class the SDK names at every stream's event, or None."""
    # Its accumulate_event names ParsedMessage[ResponseFormatT] at each event, and pydantic
    # caches that class only weakly: after a full garbage collection the next stream built
    # it again (1 to 10 ms of the event loop; 85 times in 310 messages of figure 1 in
    # docs/performance.md). Called after a stream, this finds it cached and keeps it so.
    # Private names: if they move, nothing is held.
    try:
        from anthropic.lib.streaming import _messages
    except ImportError:
        return None
    parsed = getattr(_messages, "ParsedMessage", None)
    variable = getattr(_messages, "ResponseFormatT", None)
    return parsed[variable] if parsed is not None and variable is not None else None


class Progress(Protocol):
    """What the agent reports while it works; called on every delta, so it must not block.

    stopped is set when the user stops the answer: the stream is closed at once, and no tool
    call starts after it.
    """

    stopped: asyncio.Event

    def text(self, reply: Callable[[], str]) -> None:
        """Show the reply so far: every text of this turn, the newest still growing.

        reply makes the text when called: a draft every second or so reads it, so the reply
        is not rebuilt whole at every delta of the stream.
        """

    def tool(self, name: str, subject: str | None = None) -> None:
        """Say the model is calling the tool with this name (on a web tool, about subject)."""


class StreamBroken(Exception):
    """A streamed answer broke off after it started; it is handled like a failed call."""

    def __init__(self, message: str, *, shown: bool):
        super().__init__(message)
        self.shown = shown  # whether any of its text had been reported


class Stopped(Exception):
    """The user stopped the answer; said is what this call had written (visible) by then."""

    def __init__(self, said: str):
        super().__init__("the user stopped the answer")
        self.said = said


@dataclass
class _Seen:
    """What a stream showed so far: whether any text, and the message as it had grown."""

    shown: bool = False
    message: Message | None = None

    def said(self) -> str:
        """Return this call's visible text so far."""
        if self.message is None:
            return ""
        return visible_so_far("\n\n".join(visible_texts(self.message.content)))


def reply_so_far(earlier: str, message: Message) -> str:
    """Join the texts of earlier rounds and the message's visible texts, as the answer will.

    A citation marker, even half of one, never shows (bot/agent/citations.py).
    """
    now = visible_so_far("\n\n".join(visible_texts(message.content)))
    if not now.strip():
        return earlier
    return f"{earlier}\n\n{now}" if earlier else now


async def _read(stream: AsyncMessageStream, progress: Progress, earlier: str, seen: _Seen) -> None:
    """Read a stream to its end, reporting text and tool calls; raise StreamBroken."""
    try:
        async for event in stream:
            if event.type == "text":
                seen.shown = True
                seen.message = stream.current_message_snapshot
                progress.text(functools.partial(reply_so_far, earlier, seen.message))
            elif event.type == "content_block_start" and event.content_block.type in (
                "tool_use",
                "server_tool_use",
            ):
                progress.tool(event.content_block.name)
            elif event.type == "content_block_stop":
                # A web tool's input has streamed in whole: say what it searches or reads.
                block = event.content_block
                if block.type == "server_tool_use" and (
                    subject := subject_of(block.name, block.input)
                ):
                    progress.tool(block.name, subject)
    # An `event: error` arrives as a status error, a lost connection as httpx2's own error,
    # and tool input the SDK cannot parse as it streams (never a JSON object) as ValueError.
    except (APIStatusError, httpx2.TransportError, ValueError) as error:
        raise StreamBroken(f"{type(error).__name__}: {error}", shown=seen.shown) from error


async def _until_stopped(reading: asyncio.Future[None], stopped: asyncio.Event) -> bool:
    """Wait for reading to end or the user to stop; cancel reading on a stop and return True."""
    press = asyncio.ensure_future(stopped.wait())
    try:
        await asyncio.wait((reading, press), return_when=asyncio.FIRST_COMPLETED)
    finally:
        press.cancel()
        if not reading.done():
            reading.cancel()  # a stop, or this turn cancelled: the stream closes either way
            with contextlib.suppress(asyncio.CancelledError):
                await reading
    if reading.cancelled():
        return True
    reading.result()  # raises what broke the stream
    return False


async def _stream_once(
    client: AsyncAnthropic,
    request: MessageCreateParamsBase,
    progress: Progress,
    earlier: str,
) -> Message:
    """Stream one request to its end, reporting text and tool calls; raise StreamBroken.

    Raises Stopped when the user stops it: leaving the block closes the connection, so the
    model writes (and bills) nothing more.
    """
    if progress.stopped.is_set():
        raise Stopped("")
    seen = _Seen()
    # Errors before the first event (status codes, connection) come from here, retried by the SDK.
    async with client.messages.stream(**request) as stream:
        reading = asyncio.ensure_future(_read(stream, progress, earlier, seen))
        if await _until_stopped(reading, progress.stopped):
            raise Stopped(seen.said())
        message = await stream.get_final_message()
    _hold_parametrized_message()
    if message.stop_reason is None:
        # The body ended cleanly but without message_delta: the answer is incomplete.
        raise StreamBroken("the stream ended before the message did", shown=seen.shown)
    return message


async def stream_message(
    client: AsyncAnthropic,
    request: MessageCreateParamsBase,
    progress: Progress,
    earlier: Sequence[str],
) -> Message:
    """Stream one model call; ask again once if it breaks off before showing any text.

    The SDK retries a request that fails before its stream starts, but never a stream that
    started; once text was shown, a second answer would contradict it, so that is not retried.
    """
    joined = "\n\n".join(earlier)
    try:
        return await _stream_once(client, request, progress, joined)
    except StreamBroken as broken:
        if broken.shown:
            raise
        logger.warning("the model's answer broke off before any text (%s); asking again", broken)
    await asyncio.sleep(RETRY_DELAY_SECONDS)
    return await _stream_once(client, request, progress, joined)
