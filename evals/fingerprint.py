"""A hash of the instructions and tool definitions exactly as the client sent them.

Two runs with the same hash measured the same prompt; a prompt change shows as a new hash.
"""

import hashlib
import json

from evals.transcript import Exchange
from memory.tools import MEMORY_TOOLS


def fingerprint(request: dict) -> str:
    """Return the sha256 of a request's first system block's text and its tools list."""
    system = request.get("system") or []
    text = system if isinstance(system, str) else system[0]["text"] if system else ""
    canonical = json.dumps(
        {"system": text, "tools": request.get("tools") or []},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def first_fingerprint(exchanges: list[Exchange]) -> str | None:
    """Return the fingerprint of the first agent request that offered tools.

    Requests with memory off offer no memory tools (reminder tools only), so one is used only
    when no request offered memory tools.
    """
    agent = [e for e in exchanges if not e.is_summary]
    memory = {tool.name for tool in MEMORY_TOOLS}
    chosen = next((e for e in agent if memory & set(e.tool_names)), agent[0] if agent else None)
    return fingerprint(chosen.request) if chosen else None
