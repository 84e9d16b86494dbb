"""A fake Anthropic Messages API server that records requests and plays scripted replies.

It validates requests the way the real API does (roles, tool_use/tool_result pairing, system
blocks, cache_control, tools, images and documents, request size), so a conversation accepted
here is well-formed for the real API. The real ``anthropic.AsyncAnthropic`` client talks to it
unmodified via ``base_url``, with or without streaming: a request with ``"stream": true`` is
answered with the API's server-sent events, paced and broken off as the scripted Reply says.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
import json
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.anthropic_citations import (
    CitationError,
    Part,
    citing_blocks,
    validate_search_results,
    without_citations,
)
from tests.fakes.anthropic_media import (
    MAX_REQUEST_BYTES,
    MediaError,
    iter_media,
    media_tokens,
    validate_media,
    without_media,
)
from tests.fakes.anthropic_models import (
    NO_CREDITS_MESSAGE,
    NO_PERMISSION_MESSAGE,
    model_info,
    unknown_model_message,
)
from tests.fakes.anthropic_web import (
    RESULT_TYPES,
    WebInvalid,
    offered,
    server_tool_usage,
    validate_blocks,
    validate_tools,
    within_limits,
)
from tests.fakes.claude_tokens import text_tokens
from tests.fakes.local_server import LocalServer

MAX_CACHE_CONTROL_BLOCKS = 4
_TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


# Characters of text (or of tool input JSON) per streamed delta: a few tokens, as the API sends.
STREAM_CHUNK_CHARS = 16
# What a non-streamed request answers for a reply scripted to fail mid-stream with these types.
_ERROR_STATUS = {
    "overloaded_error": 529, "api_error": 500, "rate_limit_error": 429,
    "invalid_request_error": 400, "permission_error": 403, "not_found_error": 404,
    "request_too_large": 413, "timeout_error": 504,
}  # fmt: skip


@dataclass(frozen=True)
class StreamFailure:
    """Where and how a scripted streamed reply breaks off."""

    after: int | None  # characters of text/tool JSON streamed first; None: all of them
    error_type: str | None  # an `event: error` of this type, or None to drop the connection
    message: str = ""


@dataclass(frozen=True)
class Reply:
    """A scripted assistant message, and how a streamed answer with it is paced or broken."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"
    first_delay: float = 0.0  # seconds before the first content delta
    duration: float = 0.0  # seconds over which the deltas are spread after the first
    failure: StreamFailure | None = None
    # Streamed: after the first block starts, only pings until this is set (forever if never).
    pinging: asyncio.Event | None = None


@dataclass(frozen=True)
class ErrorReply:
    """A scripted API error."""

    status: int
    type: str
    message: str


Script = Reply | ErrorReply | Callable[[dict[str, Any]], Reply | ErrorReply]


def text(
    s: str, stop_reason: str = "end_turn", *, first_delay: float = 0.0, duration: float = 0.0
) -> Reply:
    """Reply with one text block; when streamed, start after first_delay, last for duration."""
    return Reply([{"type": "text", "text": s}], stop_reason, first_delay, duration)


def paced(reply: Reply | str, *, first_delay: float = 0.0, duration: float = 0.0) -> Reply:
    """Return the reply (or a text reply) streamed after first_delay and over duration seconds.

    A non-streamed request for it is answered after first_delay + duration, the time the whole
    generation would take.
    """
    return dataclasses.replace(_as_reply(reply), first_delay=first_delay, duration=duration)


def fail_mid_stream(
    reply: Reply | str,
    *,
    after: int | None = None,
    type: str = "overloaded_error",
    message: str = "Overloaded",
) -> Reply:
    """Stream `after` characters of the reply (all if None), then an `event: error`.

    Without streaming, the request is answered with that error's HTTP status instead.
    """
    return dataclasses.replace(_as_reply(reply), failure=StreamFailure(after, type, message))


def drop_mid_stream(reply: Reply | str, *, after: int | None = None) -> Reply:
    """Stream `after` characters of the reply (all if None), then close the connection.

    Without streaming, the connection is closed before any answer.
    """
    return dataclasses.replace(_as_reply(reply), failure=StreamFailure(after, None))


# How often a paced stream looks whether its client hung up.
CLOSE_CHECK_SECONDS = 0.005
# How often a pinging stream sends its ping: often enough that a read timeout never fires.
PING_SECONDS = 0.05


def keep_pinging(reply: Reply | str, *, until: asyncio.Event | None = None) -> Reply:
    """Stream the reply's start, then only pings until `until` is set (never if None), then
    the rest: a stream kept alive, so no client timeout ends it.

    Without streaming, the request is answered once `until` is set (never if None).
    """
    return dataclasses.replace(_as_reply(reply), pinging=until or asyncio.Event())


def _as_reply(reply: Reply | str) -> Reply:
    return text(reply) if isinstance(reply, str) else reply


def tool_use(
    name: str, input: dict[str, Any], *, id: str | None = None, text: str | None = None
) -> Reply:
    """Reply with a single tool call, optionally preceded by some text."""
    return tool_uses([(name, input)], text=text, ids=[id])


def tool_uses(
    calls: list[tuple[str, dict[str, Any]]],
    text: str | None = None,
    ids: list[str | None] | None = None,
) -> Reply:
    """Reply with several tool calls in one message, optionally preceded by some text."""
    ids = ids or [None] * len(calls)
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for (name, arguments), tool_id in zip(calls, ids, strict=True):
        blocks.append(
            {
                "type": "tool_use",
                "id": tool_id or f"toolu_{secrets.token_hex(12)}",
                "name": name,
                "input": arguments,
            }
        )
    return Reply(blocks, "tool_use")


def citing(*parts: Part, stop_reason: str = "end_turn") -> Callable[[dict[str, Any]], Reply]:
    """Reply with text whose (text, source) parts cite the request's search results by source.

    The citations are made from the request, as the API makes them (anthropic_citations).
    """
    return lambda body: Reply(citing_blocks(body, parts), stop_reason)


def error(status: int, type: str, message: str) -> ErrorReply:
    """Answer with an API error, e.g. error(529, "overloaded_error", "Overloaded")."""
    return ErrorReply(status, type, message)


# What the real API answers every call of an account without credits, or of a key that may
# not use the model: set FakeAnthropic.account_error to one of them (or script it once).
NO_CREDITS = ErrorReply(400, "invalid_request_error", NO_CREDITS_MESSAGE)
NO_PERMISSION = ErrorReply(403, "permission_error", NO_PERMISSION_MESSAGE)


def reply(content_blocks: list[dict[str, Any]], stop_reason: str = "end_turn") -> Reply:
    """Reply with raw content blocks."""
    return Reply(content_blocks, stop_reason)


class InvalidRequest(ValueError):
    """A request the real API would answer with 400 invalid_request_error."""


def merge_consecutive(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Merge neighbouring same-role messages like the API does; return them and the merge count."""
    merged: list[dict[str, Any]] = []
    count = 0
    for message in messages:
        if merged and merged[-1]["role"] == message.get("role"):
            merged[-1] = {
                "role": message["role"],
                "content": _blocks(merged[-1]) + _blocks(message),
            }
            count += 1
        else:
            merged.append(message)
    return merged, count


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def validate(body: dict[str, Any], *, count_tokens: bool = False) -> None:
    """Raise InvalidRequest with the API's wording if body is not a valid Messages request."""
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise InvalidRequest("model: Field required")
    if not count_tokens:
        if "max_tokens" not in body:
            raise InvalidRequest("max_tokens: Field required")
        if not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1:
            raise InvalidRequest("max_tokens: Input should be greater than or equal to 1")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("messages: at least one message is required")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise InvalidRequest(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        content = message.get("content")
        if not isinstance(content, str | list) or not content:
            raise InvalidRequest(
                f"messages.{i}: all messages must have non-empty content except for the optional "
                "final assistant message"
            )
    if messages[0]["role"] != "user":
        raise InvalidRequest('messages: first message must use the "user" role')
    try:
        validate_media(messages)
    except MediaError as exc:
        raise InvalidRequest(str(exc)) from None
    merged, _ = merge_consecutive(messages)
    for i, message in enumerate(merged):
        _validate_blocks(f"messages.{i}", _blocks(message))
    _validate_tool_pairing(merged)
    try:
        validate_search_results(merged)
    except CitationError as exc:
        raise InvalidRequest(str(exc)) from None
    last = _blocks(merged[-1])
    if merged[-1]["role"] == "assistant" and last[-1].get("type") == "text":
        if last[-1]["text"] != last[-1]["text"].rstrip():
            raise InvalidRequest("final assistant content cannot end with trailing whitespace")
    _validate_system(body.get("system"))
    _validate_tools(body.get("tools"))
    try:
        validate_tools(body.get("tools"))
        validate_blocks([{**m, "content": _blocks(m)} for m in merged], offered(body.get("tools")))
    except WebInvalid as exc:
        raise InvalidRequest(str(exc)) from None
    _validate_cache_control(body)


def _validate_blocks(where: str, blocks: list[dict[str, Any]]) -> None:
    for j, block in enumerate(blocks):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise InvalidRequest(f"{where}.content.{j}.type: Field required")
        if block["type"] == "text":
            if not isinstance(block.get("text"), str) or not block["text"]:
                raise InvalidRequest("messages: text content blocks must be non-empty")
            if not block["text"].strip():
                raise InvalidRequest(
                    "messages: text content blocks must contain non-whitespace text"
                )
        elif block["type"] == "tool_use" and not (
            isinstance(block.get("id"), str)
            and isinstance(block.get("name"), str)
            and isinstance(block.get("input"), dict)
        ):
            raise InvalidRequest(f"{where}.content.{j}: tool_use needs id, name and input")
        elif block["type"] == "tool_result" and not isinstance(block.get("tool_use_id"), str):
            raise InvalidRequest(f"{where}.content.{j}.tool_use_id: Field required")


def _validate_tool_pairing(messages: list[dict[str, Any]]) -> None:
    """Check that each tool_use is answered first thing in the very next user message."""
    for i, message in enumerate(messages):
        blocks = _blocks(message)
        kinds = {block["type"] for block in blocks}
        if message["role"] == "user" and "tool_use" in kinds:
            raise InvalidRequest(f"messages.{i}: tool_use blocks can only be in assistant messages")
        if message["role"] == "assistant" and "tool_result" in kinds:
            raise InvalidRequest(f"messages.{i}: tool_result blocks can only be in user messages")
        if message["role"] != "user":
            continue
        previous = _blocks(messages[i - 1]) if i else []
        asked = [b["id"] for b in previous if b["type"] == "tool_use"]
        for j, block in enumerate(blocks):
            if block["type"] == "tool_result" and block["tool_use_id"] not in asked:
                raise InvalidRequest(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {block['tool_use_id']}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
    for i, message in enumerate(messages):
        asked = [b["id"] for b in _blocks(message) if b["type"] == "tool_use"]
        if not asked:
            continue
        following = _blocks(messages[i + 1]) if i + 1 < len(messages) else []
        leading: set[str] = set()
        for block in following:
            if block["type"] != "tool_result":
                break
            leading.add(block["tool_use_id"])
        missing = [tool_id for tool_id in asked if tool_id not in leading]
        if missing:
            raise InvalidRequest(
                f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )


def _validate_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise InvalidRequest("system: Input should be a valid string or a list of text blocks")
    for k, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise InvalidRequest(f"system.{k}.type: Input should be 'text'")
        if not isinstance(block.get("text"), str) or not block["text"]:
            raise InvalidRequest("system: text content blocks must be non-empty")


def _validate_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise InvalidRequest("tools: Input should be a valid list")
    names: set[str] = set()
    for k, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise InvalidRequest(f"tools.{k}: Input should be a valid dictionary")
        name = tool.get("name")
        if not isinstance(name, str) or not _TOOL_NAME_RE.match(name):
            raise InvalidRequest(
                f"tools.{k}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )
        if name in names:
            raise InvalidRequest("tools: Tool names must be unique.")
        names.add(name)
        # Server tools (web_search_..., etc.) carry a "type" and no input_schema.
        if tool.get("type", "custom") == "custom":
            schema = tool.get("input_schema")
            if not isinstance(schema, dict) or schema.get("type") != "object":
                raise InvalidRequest(f"tools.{k}.input_schema.type: Input should be 'object'")


def _cache_controls(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """List (where, cache_control) for every block that carries one."""
    found = []
    system = body.get("system")
    candidates = [(f"tools.{k}", t) for k, t in enumerate(body.get("tools") or [])]
    if isinstance(system, list):
        candidates += [(f"system.{k}", b) for k, b in enumerate(system)]
    for i, message in enumerate(body.get("messages") or []):
        if isinstance(message, dict) and isinstance(message.get("content"), list):
            candidates += [
                (f"messages.{i}.content.{j}", b) for j, b in enumerate(message["content"])
            ]
    for where, block in candidates:
        if isinstance(block, dict) and block.get("cache_control") is not None:
            found.append((where, block["cache_control"]))
    return found


def _validate_cache_control(body: dict[str, Any]) -> None:
    found = _cache_controls(body)
    for where, control in found:
        if not isinstance(control, dict) or control.get("type") != "ephemeral":
            raise InvalidRequest(f"{where}.cache_control.type: Input should be 'ephemeral'")
        if set(control) - {"type", "ttl"} or control.get("ttl", "5m") not in ("5m", "1h"):
            raise InvalidRequest(f"{where}.cache_control: only type and ttl ('5m'|'1h') allowed")
    if len(found) > MAX_CACHE_CONTROL_BLOCKS:
        raise InvalidRequest(
            f"A maximum of {MAX_CACHE_CONTROL_BLOCKS} blocks with cache_control may be provided. "
            f"Found {len(found)}."
        )


def estimate_tokens(body: dict[str, Any]) -> int:
    """Estimate prompt tokens as a quarter of the JSON size of system, tools and messages.

    Images and documents are counted by anthropic_media.media_tokens instead of by the size
    of their base64 data.
    """
    prompt = {key: body.get(key) for key in ("system", "tools", "messages")}
    media = sum(
        media_tokens(block, text_tokens) for _, _, block in iter_media(body.get("messages") or [])
    )
    dumped = json.dumps(prompt)
    # Only a block {"type": "image" | "document", ...} dumps these unescaped; without one,
    # without_media would copy the prompt unchanged (the copy cost most of a fake's reply).
    if '"type": "image"' in dumped or '"type": "document"' in dumped:
        dumped = json.dumps(without_media(prompt))
    return max(1, len(dumped) // 4 + media)


# --- prompt cache emulation ----------------------------------------------------------------
# Anthropic's documented rules: a prefix ends at a cache_control breakpoint, in the order
# tools, system, messages; a read needs an earlier write of the exact same prefix.
CACHE_MIN_TOKENS = 1024  # Sonnet's minimum cacheable prefix
CACHE_LOOKBACK_BLOCKS = 20  # block boundaries checked for a hit before each breakpoint
CACHE_TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True)
class PromptBlock:
    """One block of a prompt in cache order: its identity, its tokens, its breakpoint TTL."""

    key: str
    tokens: int
    ttl: str | None  # set only on blocks that carry cache_control


@dataclass(frozen=True)
class CacheAccount:
    """How one request's input tokens split into cache reads, cache writes and the rest."""

    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    ephemeral_5m_input_tokens: int = 0
    ephemeral_1h_input_tokens: int = 0

    @property
    def total(self) -> int:
        """Return every input token of the request, however it was billed."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _block_tokens(block: dict[str, Any]) -> int:
    """Count a block's tokens: the text of text-like blocks, media by rule, the JSON of others."""
    if block.get("type") == "text" and isinstance(block.get("text"), str):
        return text_tokens(block["text"])
    if block.get("type") in ("image", "document"):
        return media_tokens(block, text_tokens)
    if block.get("type") == "tool_result" and isinstance(block.get("content"), str):
        return text_tokens(block["content"])
    if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
        return sum(_block_tokens(b) for b in block["content"] if isinstance(b, dict))
    return text_tokens(_canonical(block))


def prompt_blocks(body: dict[str, Any]) -> list[PromptBlock]:
    """Flatten a request into cache order: each tool, each system block, each message block."""
    blocks: list[PromptBlock] = []

    def add(where: Any, block: dict[str, Any]) -> None:
        control = block.get("cache_control")
        plain = {k: v for k, v in block.items() if k != "cache_control"}
        # The marker itself is not content: moving a breakpoint must not change the prefix.
        ttl = control.get("ttl", "5m") if isinstance(control, dict) else None
        blocks.append(PromptBlock(_canonical([where, plain]), _block_tokens(plain), ttl))

    for tool in body.get("tools") or []:
        add("tools", tool)
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        add("system", block)
    # Changing tool_choice invalidates the cached messages, so it is part of their identity.
    choice = body.get("tool_choice")
    for i, message in enumerate(body.get("messages") or []):
        for block in _blocks(message):
            add(["messages", i, message.get("role"), choice], block)
    return blocks


class PromptCache:
    """Emulate Anthropic's prompt cache accounting across the requests one server receives."""

    def __init__(
        self,
        min_tokens: int = CACHE_MIN_TOKENS,
        lookback: int = CACHE_LOOKBACK_BLOCKS,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.min_tokens = min_tokens
        self.lookback = lookback
        self._clock = clock
        self._entries: dict[str, tuple[float, float]] = {}  # prefix hash -> (expiry, ttl)

    def __len__(self) -> int:
        return len(self._entries)

    def account(self, body: dict[str, Any]) -> CacheAccount:
        """Split a request's input tokens into read, written and uncached; remember its writes."""
        now = self._clock()
        self._entries = {h: entry for h, entry in self._entries.items() if entry[0] > now}
        blocks = prompt_blocks(body)
        running = hashlib.sha256(_canonical(body.get("model")).encode())
        hashes: list[str] = []
        ends: list[int] = []  # tokens of the prefix that ends with each block
        total = 0
        for block in blocks:
            running.update(block.key.encode() + b"\n")
            hashes.append(running.hexdigest())
            total += block.tokens
            ends.append(total)
        breakpoints = [i for i, block in enumerate(blocks) if block.ttl]
        read_at = -1
        for b in breakpoints:
            for j in range(b, max(b - self.lookback, 0) - 1, -1):
                if hashes[j] in self._entries:
                    read_at = max(read_at, j)
                    break
        read = ends[read_at] if read_at >= 0 else 0
        if read_at >= 0:
            # A hit refreshes the entry's lifetime.
            ttl = self._entries[hashes[read_at]][1]
            self._entries[hashes[read_at]] = (now + ttl, ttl)
        accounted = read
        written = {"5m": 0, "1h": 0}
        for b in breakpoints:
            if b <= read_at or ends[b] < self.min_tokens:
                continue
            ttl_name = blocks[b].ttl or "5m"
            written[ttl_name] += ends[b] - accounted
            accounted = ends[b]
            ttl = CACHE_TTL_SECONDS.get(ttl_name, CACHE_TTL_SECONDS["5m"])
            self._entries[hashes[b]] = (now + ttl, ttl)
        return CacheAccount(
            input_tokens=total - accounted,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=written["5m"] + written["1h"],
            ephemeral_5m_input_tokens=written["5m"],
            ephemeral_1h_input_tokens=written["1h"],
        )


class FakeAnthropic(LocalServer):
    """A Messages API server on 127.0.0.1 that records requests and replays a script."""

    max_request_bytes = 64 * 1024 * 1024

    def __init__(
        self,
        api_key: str = "sk-ant-test-key",
        *,
        latency: float = 0.0,
        cache_emulation: bool = False,
        models: dict[str, str] | None = None,
    ):
        super().__init__()
        self.api_key = api_key
        # Model id -> lifecycle ("active", "deprecated", "retired") of the models the key may
        # use; None: every id is an active model. Others get 404, as from the real API.
        self.models = models
        # An account problem answered to every Messages call (see NO_CREDITS, NO_PERMISSION).
        self.account_error: ErrorReply | None = None
        self.model_lookups: list[str] = []  # the ids GET /v1/models/{id} was asked for
        self.latency = latency  # seconds added before answering /v1/messages
        # (low, high): seconds each Messages request waits on top of latency, drawn from the
        # request's own messages, so the same request always waits the same (think_time).
        self.thinking: tuple[float, float] | None = None
        # Off by default: then usage() estimates tokens cheaply and reports no cache activity.
        self.prompt_cache: PromptCache | None = PromptCache() if cache_emulation else None
        # The model's context window in (estimated) tokens; a longer prompt is refused the way
        # the real API refuses it. None: no limit.
        self.context_window: int | None = None
        self.too_long: list[dict[str, Any]] = []  # the requests refused as too long
        # What a 400 says to every request offering a web tool (an organisation without
        # web search, say); None: web tools are accepted.
        self.web_refusal: str | None = None
        # Scripted replies that called a web tool the request did not offer (never real).
        self.unoffered: list[dict[str, Any]] = []
        self.answers: list[dict[str, Any]] = []  # the messages answered, streamed or not
        # Streams the client closed before their end: message id, events written, `at`
        # (time.monotonic() when the server saw the connection go).
        self.closed_early: list[dict[str, Any]] = []
        self.default: Script = text("OK")
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.count_requests: list[dict[str, Any]] = []
        self.invalid: list[tuple[dict[str, Any], str]] = []
        self.merged_consecutive = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._queue: list[Script] = []
        self._changed = asyncio.Event()
        self._gate: asyncio.Event | None = None

    def add_routes(self, app: web.Application) -> None:
        """Add this server's routes to its app."""
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/messages/count_tokens", self._count_tokens)
        app.router.add_get("/v1/models/{model_id}", self._model)

    @property
    def base_url(self) -> str:
        """Return the value for AsyncAnthropic(base_url=...)."""
        return f"{self.origin}"

    # --- test-side API ---------------------------------------------------------------------

    def script(self, *replies: Script) -> None:
        """Queue replies for the next valid /v1/messages calls, first in first out."""
        self._queue.extend(replies)

    def hold(self) -> None:
        """Keep every /v1/messages call waiting (after it is recorded) until release()."""
        self._gate = asyncio.Event()

    def release(self) -> None:
        """Let the held calls, and every later one, answer."""
        if self._gate is not None:
            self._gate.set()
            self._gate = None

    def remaining(self) -> int:
        """Return how many scripted replies are still unused."""
        return len(self._queue)

    @property
    def last_request(self) -> dict[str, Any]:
        """Return the body of the most recent /v1/messages call."""
        return self.requests[-1]

    def system_blocks(self, i: int = -1) -> list[dict[str, Any]]:
        """Return request i's system prompt as a list of text blocks."""
        system = self.requests[i].get("system")
        if system is None:
            return []
        return [{"type": "text", "text": system}] if isinstance(system, str) else system

    def system_text(self, i: int = -1) -> str:
        """Return request i's system prompt as one string."""
        return "\n".join(block["text"] for block in self.system_blocks(i))

    def last_user_text(self, i: int = -1) -> str:
        """Return the text blocks of request i's final user message, joined by newlines."""
        user = [m for m in self.requests[i]["messages"] if m.get("role") == "user"][-1]
        return "\n".join(b["text"] for b in _blocks(user) if b.get("type") == "text")

    def tool_names(self, i: int = -1) -> list[str]:
        """Return the names of the tools offered in request i."""
        return [tool["name"] for tool in self.requests[i].get("tools") or []]

    def images(self, i: int = -1) -> list[dict[str, Any]]:
        """Return request i's image blocks in order, those inside tool results included."""
        return [b for _, _, b in iter_media(self.requests[i]["messages"]) if b["type"] == "image"]

    def documents(self, i: int = -1) -> list[dict[str, Any]]:
        """Return request i's document blocks in order, those inside tool results included."""
        messages = self.requests[i]["messages"]
        return [b for _, _, b in iter_media(messages) if b["type"] == "document"]

    def image_data(self, i: int = -1) -> list[bytes]:
        """Return the decoded bytes of request i's base64 images, in order."""
        return [
            base64.b64decode(b["source"]["data"])
            for b in self.images(i)
            if b["source"].get("type") == "base64"
        ]

    async def wait_for_requests(
        self,
        count: int = 1,
        timeout: float = 10.0,  # noqa: ASYNC109
    ) -> list[dict[str, Any]]:
        """Wait until at least `count` /v1/messages calls were received; return their bodies."""
        return await self._wait_for(self.requests, count, timeout, "request(s)")

    async def wait_for_close(
        self,
        count: int = 1,
        timeout: float = 10.0,  # noqa: ASYNC109
    ) -> list[dict[str, Any]]:
        """Wait until `count` streams were closed early by the client; return their records."""
        return await self._wait_for(self.closed_early, count, timeout, "stream(s) closed early")

    async def _wait_for(self, records: list[Any], count: int, seconds: float, what: str) -> Any:
        """Wait until the list holds `count` records; fail the test saying how many came."""
        try:
            async with asyncio.timeout(seconds):
                while len(records) < count:
                    await self._changed.wait()
        except TimeoutError:
            raise AssertionError(
                f"expected {count} {what} within {seconds}s, got {len(records)}"
            ) from None
        return records

    def usage(self, request: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, Any]:
        """Return the usage block for a response, with cache accounting when emulated."""
        # The web tools' results are read by the model, not written: the API bills them as
        # input of the call that ran them.
        written = [b for b in content if b.get("type") not in RESULT_TYPES]
        output_tokens = max(1, len(json.dumps(without_citations(written))) // 4)
        usage = self._token_usage(request, output_tokens)
        if any(block.get("type") == "server_tool_use" for block in content):
            results = [b for b in content if b.get("type") in RESULT_TYPES]
            usage["input_tokens"] += sum(_block_tokens(b) for b in results)
            usage["server_tool_use"] = server_tool_usage(content)
        return usage

    def _token_usage(self, request: dict[str, Any], output_tokens: int) -> dict[str, Any]:
        """Return the usage block's token counts, with cache accounting when emulated."""
        if self.prompt_cache is None:
            return {
                "input_tokens": estimate_tokens(request),
                "output_tokens": output_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
                "service_tier": "standard",
            }
        account = self.prompt_cache.account(request)
        return {
            "input_tokens": account.input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": account.cache_creation_input_tokens,
            "cache_read_input_tokens": account.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": account.ephemeral_5m_input_tokens,
                "ephemeral_1h_input_tokens": account.ephemeral_1h_input_tokens,
            },
            "service_tier": "standard",
        }

    def _run_web_tools(self, body: dict[str, Any], scripted: Reply) -> Reply:
        """Return the reply with its web calls run as the API would under the request's tools."""
        content = within_limits(scripted.content, offered(body.get("tools")), body["messages"])
        if content is None:
            self.unoffered.append(body)
            return dataclasses.replace(scripted, content=[{"type": "text", "text": "(no web)"}])
        return dataclasses.replace(scripted, content=content)

    # --- handlers --------------------------------------------------------------------------

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body = _json_body(raw)
        self.requests.append(body)
        self.request_headers.append(dict(request.headers))
        self._changed.set()
        self._changed = asyncio.Event()
        # Count overlapping calls, so tests can see concurrency without timing it.
        counted = bool(self.latency or body.get("stream"))
        if counted:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(request, raw, body)
        finally:
            if counted:
                self.in_flight -= 1

    def think_time(self, body: dict[str, Any]) -> float:
        """Return how long the request waits for thinking: the same for the same messages."""
        if self.thinking is None:
            return 0.0
        low, high = self.thinking
        digest = hashlib.sha256(_canonical(body.get("messages")).encode()).digest()
        return low + (high - low) * int.from_bytes(digest[:4]) / 2**32

    async def _answer(
        self, request: web.Request, raw: bytes, body: dict[str, Any]
    ) -> web.StreamResponse:
        if self._gate is not None:
            await self._gate.wait()
        if delay := self.latency + self.think_time(body):
            await asyncio.sleep(delay)
            if request.transport is None or request.transport.is_closing():
                # The client gave up while we waited: like the API, answer nothing and keep
                # the scripted reply for the next request.
                return web.Response()
        refused = self._check_headers(request) or _check_size(raw) or self._refuse_account(body)
        if refused is not None:
            return refused
        try:
            validate(body)
        except InvalidRequest as exc:
            return self._invalid(body, str(exc))
        if (too_long := self._check_length(body)) is not None:
            return too_long
        if self.web_refusal is not None and offered(body.get("tools")):
            return _error(400, "invalid_request_error", self.web_refusal)
        self.merged_consecutive += merge_consecutive(body["messages"])[1]
        scripted = self._queue.pop(0) if self._queue else self.default
        if callable(scripted):
            scripted = scripted(body)
        if isinstance(scripted, ErrorReply):
            return _error(scripted.status, scripted.type, scripted.message)
        scripted = self._run_web_tools(body, scripted)
        message = {
            "id": f"msg_{secrets.token_hex(12)}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": scripted.content,
            "stop_reason": scripted.stop_reason,
            "stop_sequence": None,
            "usage": self.usage(body, scripted.content),
        }
        self.answers.append(message)
        if body.get("stream"):
            return await self._stream(request, message, scripted)
        if scripted.pinging is not None:
            await scripted.pinging.wait()
        await asyncio.sleep(scripted.first_delay + scripted.duration)
        failure = scripted.failure
        if failure is not None and failure.error_type is None:
            _drop_connection(request)
            return web.Response()  # never sent: the connection is gone
        if failure is not None and failure.error_type is not None:
            status = _ERROR_STATUS.get(failure.error_type, 500)
            return _error(status, failure.error_type, failure.message)
        return web.json_response(message, headers={"request-id": _request_id()})

    async def _stream(
        self, request: web.Request, message: dict[str, Any], scripted: Reply
    ) -> web.StreamResponse:
        """Answer with the API's server-sent events, paced and broken off as scripted."""
        response = web.StreamResponse(
            headers={
                "content-type": "text/event-stream; charset=utf-8",
                "cache-control": "no-cache",
                "request-id": _request_id(),
            }
        )
        await response.prepare(request)
        written: list[dict[str, Any]] = []
        try:
            steps = stream_steps(message, scripted)
            await self._write_steps(request, response, steps, written, scripted.pinging)
        except ConnectionResetError:
            # The client closed the stream before its end: nothing more is written (or billed).
            deltas = [e for e in written if e["type"] == "content_block_delta"]
            self.closed_early.append(
                {"id": message["id"], "events": len(written), "deltas": len(deltas),
                 "at": time.monotonic()}
            )  # fmt: skip
            self._changed.set()
            self._changed = asyncio.Event()
        return response

    async def _write_steps(
        self,
        request: web.Request,
        response: web.StreamResponse,
        steps: list[Step],
        written: list[dict[str, Any]],
        pinging: asyncio.Event | None,
    ) -> None:
        """Write the stream's events, paced and broken off as scripted; note each written."""
        for step in steps:
            if isinstance(step, float):
                await _pause(request, step)
            elif step is None:
                # Close without the terminating chunk, as a connection lost mid-answer does.
                _drop_connection(request)
                return
            elif step["type"] == "ping" and pinging is not None:
                if not await _ping_until(response, pinging):
                    return  # the client gave up and closed the connection
            else:
                data = json.dumps(step, ensure_ascii=False)
                await response.write(f"event: {step['type']}\ndata: {data}\n\n".encode())
                written.append(step)
        await response.write_eof()

    async def _count_tokens(self, request: web.Request) -> web.Response:
        raw = await request.read()
        body = _json_body(raw)
        self.count_requests.append(body)
        refused = self._check_headers(request) or _check_size(raw) or self._refuse_account(body)
        if refused is not None:
            return refused
        try:
            validate(body, count_tokens=True)
        except InvalidRequest as exc:
            return self._invalid(body, str(exc))
        return web.json_response(
            {"input_tokens": estimate_tokens(body)}, headers={"request-id": _request_id()}
        )

    async def _model(self, request: web.Request) -> web.Response:
        """Answer GET /v1/models/{model_id} with the model's ModelInfo, or 404."""
        model_id = request.match_info["model_id"]
        self.model_lookups.append(model_id)
        refused = self._check_headers(request)
        if refused is not None:
            return refused
        lifecycle = "active" if self.models is None else self.models.get(model_id)
        if lifecycle is None:
            return _error(404, "not_found_error", unknown_model_message(model_id))
        return web.json_response(
            model_info(model_id, lifecycle), headers={"request-id": _request_id()}
        )

    def _refuse_account(self, body: dict[str, Any]) -> web.Response | None:
        """Answer an account problem, or a model the key may not use, as the real API does."""
        if self.account_error is not None:
            problem = self.account_error
            return _error(problem.status, problem.type, problem.message)
        model = body.get("model")
        if self.models is None or not isinstance(model, str):
            return None  # validate() answers a missing model
        if self.models.get(model, "retired") == "retired":
            # Inference with a retired model fails like one that never existed.
            return _error(404, "not_found_error", unknown_model_message(model))
        return None

    def _check_headers(self, request: web.Request) -> web.Response | None:
        # The SDK sends the key as "Authorization: Bearer"; raw clients use x-api-key.
        key = request.headers.get("x-api-key")
        bearer = request.headers.get("authorization", "")
        if key is None and bearer.lower().startswith("bearer "):
            key = bearer[len("bearer ") :]
        if key is None:
            return _error(401, "authentication_error", "x-api-key header is required")
        if key != self.api_key:
            return _error(401, "authentication_error", "invalid x-api-key")
        if not request.headers.get("anthropic-version"):
            return _error(400, "invalid_request_error", "anthropic-version: header is required")
        return None

    def _check_length(self, body: dict[str, Any]) -> web.Response | None:
        """Refuse a prompt over the context window, in the real API's words (observed)."""
        if self.context_window is None:
            return None
        tokens = estimate_tokens(body)
        if tokens <= self.context_window:
            return None
        self.too_long.append(body)
        return _error(
            400,
            "invalid_request_error",
            f"prompt is too long: {tokens} tokens > {self.context_window} maximum",
        )

    def _invalid(self, body: dict[str, Any], message: str) -> web.Response:
        self.invalid.append((body, message))
        return _error(400, "invalid_request_error", message)


async def _ping_until(response: web.StreamResponse, until: asyncio.Event) -> bool:
    """Send a ping every PING_SECONDS until the event is set; False if the client left."""
    while not until.is_set():
        try:
            await response.write(b'event: ping\ndata: {"type": "ping"}\n\n')
        except ConnectionResetError:
            return False
        try:
            await asyncio.wait_for(until.wait(), PING_SECONDS)
        except TimeoutError:
            continue
    return True


async def _pause(request: web.Request, seconds: float) -> None:
    """Sleep between events; raise ConnectionResetError as soon as the client hangs up.

    A client that closes a stream early (the bot, when the user presses Stop) is seen within
    CLOSE_CHECK_SECONDS, not at the next event's write.
    """
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if request.transport is None or request.transport.is_closing():
            raise ConnectionResetError("the client closed the stream")
        await asyncio.sleep(min(left, CLOSE_CHECK_SECONDS))


def _json_body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _check_size(raw: bytes) -> web.Response | None:
    if len(raw) > MAX_REQUEST_BYTES:
        return _error(413, "request_too_large", "Request exceeds the maximum size")  # observed
    return None


# message_delta repeats the cumulative counts, as the API's streams do.
_DELTA_USAGE_KEYS = (
    "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens",
    "server_tool_use",
)  # fmt: skip
Step = dict[str, Any] | float | None  # an event to send, seconds to wait, or a dropped line


def stream_steps(message: dict[str, Any], reply: Reply) -> list[Step]:
    """Return the events of a streamed message with the pauses between them.

    The shapes follow the API's streams: a message_start whose message has no content and one
    output token; per block a content_block_start (text empty, tool_use input {}), deltas and a
    content_block_stop; a ping after the first block starts; message_delta with the stop reason
    and the cumulative usage; message_stop. Blocks of other types (e.g. server tool results)
    start complete and have no deltas.
    """
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    deltas: list[tuple[int, dict[str, Any], int]] = []  # (position in events, delta, chars)
    for index, block in enumerate(message["content"]):
        opening, pieces = _block_deltas(block)
        events.append({"type": "content_block_start", "index": index, "content_block": opening})
        if index == 0:
            events.append({"type": "ping"})
        for delta, chars in pieces:
            deltas.append((len(events), delta, chars))
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {key: usage[key] for key in _DELTA_USAGE_KEYS if key in usage},
        }
    )
    events.append({"type": "message_stop"})
    steps: list[Step] = list(events)
    _break_off(steps, deltas, reply.failure)
    # Pauses go in from the back, so the positions recorded in `deltas` stay valid.
    timed = [position for position, _, _ in deltas if position < len(steps)]
    gap = reply.duration / (len(timed) - 1) if len(timed) > 1 else 0.0
    for n, position in reversed(list(enumerate(timed))):
        pause = reply.first_delay if n == 0 else gap
        if pause:
            steps.insert(position, float(pause))
    return steps


def _block_deltas(block: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[dict[str, Any], int]]]:
    """Return a block's content_block_start payload and its deltas with their sizes."""
    kind = block.get("type")
    if kind == "text":
        pieces = _pieces(block["text"])
        opening: dict[str, Any] = {"type": "text", "text": ""}
        deltas: list[tuple[dict[str, Any], int]] = [
            ({"type": "text_delta", "text": p}, len(p)) for p in pieces
        ]
        # A cited text's citations come after its words, one citations_delta each.
        citations = block.get("citations") or []
        return opening, deltas + [
            ({"type": "citations_delta", "citation": c}, 0) for c in citations
        ]
    if kind in ("tool_use", "server_tool_use"):
        # The API's first input_json_delta is empty; the JSON then arrives in pieces.
        pieces = ["", *_pieces(json.dumps(block["input"], ensure_ascii=False))]
        opening = {**block, "input": {}}
        return opening, [({"type": "input_json_delta", "partial_json": p}, len(p)) for p in pieces]
    if kind == "thinking":
        pieces = _pieces(block.get("thinking", ""))
        opening = {**block, "thinking": "", "signature": ""}
        deltas = [({"type": "thinking_delta", "thinking": p}, len(p)) for p in pieces]
        deltas.append(({"type": "signature_delta", "signature": block.get("signature", "")}, 0))
        return opening, deltas
    return block, []


def _pieces(text: str, size: int = STREAM_CHUNK_CHARS) -> list[str]:
    """Split text into pieces of at most `size` characters, preferably after a space."""
    pieces = []
    while len(text) > size:
        cut = text.rfind(" ", 1, size) + 1 or size
        pieces.append(text[:cut])
        text = text[cut:]
    return [*pieces, text] if text else pieces


def _break_off(
    steps: list[Step], deltas: list[tuple[int, dict[str, Any], int]], failure: StreamFailure | None
) -> None:
    """Cut the steps where the failure strikes and append its error event or dropped line."""
    if failure is None:
        return
    cut = len(steps) - 2  # by default after the last content_block_stop
    if failure.after is not None:
        sent = 0
        for position, delta, chars in deltas:
            if sent + chars > failure.after:
                # Send the part of this delta that reaches exactly `after` characters.
                keep = failure.after - sent
                field = "text" if delta["type"] == "text_delta" else "partial_json"
                event = steps[position]
                if keep and field in delta and isinstance(event, dict):
                    steps[position] = {**event, "delta": {**delta, field: delta[field][:keep]}}
                    position += 1
                cut = position
                break
            sent += chars
    del steps[cut:]
    if failure.error_type is None:
        steps.append(None)
    else:
        error = {"type": failure.error_type, "message": failure.message}
        steps.append({"type": "error", "error": error})


def _request_id() -> str:
    return f"req_{secrets.token_hex(12)}"


def _drop_connection(request: web.Request) -> None:
    """Close the client's connection without an answer, as a lost connection does."""
    if request.transport is not None:
        request.transport.close()


def _error(status: int, kind: str, message: str) -> web.Response:
    request_id = _request_id()
    headers = {"request-id": request_id}
    if status in (408, 409, 429) or status >= 500:
        # The SDK honours retry-after-ms, which keeps its retries fast in tests.
        headers["retry-after-ms"] = "10"
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": request_id}
    return web.json_response(body, status=status, headers=headers)
