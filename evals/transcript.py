"""What one trial recorded: every model call as sent and answered, the replies, the memories."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from bot.conversations.content import result_text
from memory.items import MemoryItem, MemoryRecord

# What add_to_memory answers when it saved: the new memory's id.
SAVED_AS = re.compile(r"^Saved as ([A-Za-z0-9]{8})\b")


@dataclass(frozen=True)
class Usage:
    """Tokens billed for model calls, by kind."""

    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.output + other.output,
        )

    @classmethod
    def of(cls, usage: dict[str, Any]) -> Usage:
        """Read the usage block of a Messages API response."""
        return cls(
            usage.get("input_tokens") or 0,
            usage.get("cache_read_input_tokens") or 0,
            usage.get("cache_creation_input_tokens") or 0,
            usage.get("output_tokens") or 0,
        )


@dataclass(frozen=True)
class Exchange:
    """One Messages API call of a trial: the body the client sent, the answer, the user turn."""

    turn: int
    request: dict[str, Any]
    response: dict[str, Any]

    @property
    def is_summary(self) -> bool:
        """Tell a compaction call (a plain-string system prompt) from an agent call (blocks)."""
        return isinstance(self.request.get("system"), str)

    @property
    def system_text(self) -> str:
        """Return the system prompt as one string."""
        system = self.request.get("system") or ""
        return system if isinstance(system, str) else "\n".join(b["text"] for b in system)

    @property
    def tool_names(self) -> list[str]:
        """Return the names of the tools offered."""
        return [tool["name"] for tool in self.request.get("tools") or []]


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model made in a turn, and what the tool answered."""

    turn: int
    name: str
    input: dict[str, Any]
    result: str
    is_error: bool

    @property
    def saved_id(self) -> str | None:
        """Return the id an add_to_memory call saved, from its result."""
        match = SAVED_AS.match(self.result) if self.name == "add_to_memory" else None
        return match.group(1) if match else None


def _result_text(block: dict[str, Any]) -> str:
    """Return a tool_result's content as text."""
    return result_text(block.get("content", ""))


def _is_web(block: dict[str, Any]) -> bool:
    """Tell whether a response block is a web tool's result."""
    return block.get("type") in ("web_search_tool_result", "web_fetch_tool_result")


def _web_result(block: dict[str, Any]) -> dict[str, Any]:
    """Return a web tool's result as a tool_result: its pages' addresses, or its error code."""
    content = block.get("content")
    if isinstance(content, dict) and "error_code" in content:
        return {"content": str(content["error_code"]), "is_error": True}
    pages = content if isinstance(content, list) else [content or {}]
    return {"content": "\n".join(str(page.get("url", "")) for page in pages)}


@dataclass
class Transcript:
    """A trial as the rules see it."""

    replies: list[str | None]  # the answer to each turn of the case; None: never answered
    exchanges: list[Exchange]
    seeds: dict[str, str]  # seed key -> memory id
    memories: list[MemoryRecord]  # every memory of the owner at the end, forgotten ones too
    error: str | None = None

    @property
    def agent_exchanges(self) -> list[Exchange]:
        """Return the agent's calls, without compaction's."""
        return [e for e in self.exchanges if not e.is_summary]

    @functools.cached_property
    def calls(self) -> list[ToolCall]:
        """Return every tool call in order, each with the result the model was sent back."""
        results = {
            block["tool_use_id"]: block
            for exchange in self.exchanges
            for message in exchange.request.get("messages", [])
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        }
        calls = []
        for exchange in self.agent_exchanges:
            content = exchange.response.get("content", [])
            # The web tools run on the API's side: their results come in the same response.
            results.update({b["tool_use_id"]: _web_result(b) for b in content if _is_web(b)})
            for block in content:
                if block.get("type") not in ("tool_use", "server_tool_use"):
                    continue
                result = results.get(block["id"], {})
                calls.append(
                    ToolCall(
                        exchange.turn,
                        block["name"],
                        block.get("input") or {},
                        _result_text(result),
                        bool(result.get("is_error")),
                    )
                )
        return calls

    @property
    def active(self) -> list[MemoryItem]:
        """Return the memories active at the end."""
        return [r.item for r in self.memories if r.item.deleted_at is None]

    @property
    def created_ids(self) -> set[str]:
        """Return the ids this trial's add_to_memory calls were told they saved."""
        return {call.saved_id for call in self.calls if call.saved_id}

    def usage(self) -> Usage:
        """Return the tokens of all the trial's model calls."""
        return sum((Usage.of(e.response.get("usage", {})) for e in self.exchanges), Usage())
