"""The Messages API's web server tools, as the fake speaks them: web_search and web_fetch.

Scripts build what the real API sends: a server_tool_use block (an srvtoolu_ id, the query or
URL as input), its web_search_tool_result (results with encrypted_content, page_age, title and
url) or web_fetch_tool_result (the page as a text document), and text blocks citing results
with web_search_result_location citations. The encrypted parts are sealed with a key of this
module, so a request that sends them back altered, or invented, is refused as the real API
refuses it. Requests are checked as the API checks them: the tools' versions and fields, and
a server_tool_use answered by its result in the same assistant message (only the newest
message may end in one: a paused turn the API continues).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from typing import Any

_KEY = secrets.token_bytes(32)
SEARCH_TYPES = ("web_search_20250305", "web_search_20260209", "web_search_20260318")
FETCH_TYPES = (
    "web_fetch_20250910",
    "web_fetch_20260209",
    "web_fetch_20260309",
    "web_fetch_20260318",
)
RESULT_TYPES = ("web_search_tool_result", "web_fetch_tool_result")
SEARCH_ERROR_CODES = (
    "invalid_tool_input", "unavailable", "max_uses_exceeded", "too_many_requests",
    "query_too_long", "request_too_large",
)  # fmt: skip
FETCH_ERROR_CODES = (
    "invalid_tool_input", "url_too_long", "url_not_allowed", "url_not_in_prior_context",
    "url_not_accessible", "unsupported_content_type", "too_many_requests", "max_uses_exceeded",
    "unavailable", "content_too_large",
)  # fmt: skip
RETRIEVED_AT = "2026-11-26T12:00:00.000000+00:00"


class WebInvalid(ValueError):
    """A request the real API refuses for its web tools or their blocks (400)."""


def _seal(payload: dict[str, Any]) -> str:
    """Return payload as an opaque string only this module can have made."""
    raw = json.dumps(payload, sort_keys=True).encode()
    mac = hmac.new(_KEY, raw, hashlib.sha256).digest()[:12]
    return base64.b64encode(mac + raw).decode()


def _unseal(sealed: object) -> dict[str, Any] | None:
    """Return what _seal sealed, or None if the string was altered or made elsewhere."""
    if not isinstance(sealed, str):
        return None
    try:
        data = base64.b64decode(sealed, validate=True)
    except ValueError:
        return None
    mac, raw = data[:12], data[12:]
    if not hmac.compare_digest(mac, hmac.new(_KEY, raw, hashlib.sha256).digest()[:12]):
        return None
    return json.loads(raw)


# --- what scripts build -----------------------------------------------------------------------


def server_id() -> str:
    """Return a new server tool call id, as the API makes them."""
    return f"srvtoolu_{secrets.token_hex(12)}"


def search_result(title: str, url: str, page_age: str | None = "2 days ago") -> dict[str, Any]:
    """Return one web_search_result, its page's text sealed as the API encrypts it."""
    result: dict[str, Any] = {
        "type": "web_search_result",
        "title": title,
        "url": url,
        "encrypted_content": _seal({"url": url, "page": f"The text of {title}. " * 20}),
    }
    if page_age is not None:
        result["page_age"] = page_age
    return result


def web_search(
    query: str, results: list[dict[str, Any]] | str, *, id: str | None = None
) -> list[dict[str, Any]]:
    """Return a search's server_tool_use and its result (results, or an error code)."""
    call_id = id or server_id()
    content: Any = results
    if isinstance(results, str):
        content = {"type": "web_search_tool_result_error", "error_code": results}
    return [
        {"type": "server_tool_use", "id": call_id, "name": "web_search", "input": {"query": query}},
        {"type": "web_search_tool_result", "tool_use_id": call_id, "content": content},
    ]


def web_fetch(
    url: str, title: str = "", text: str = "", *, error: str | None = None, id: str | None = None
) -> list[dict[str, Any]]:
    """Return a page read's server_tool_use and its result: the page as a text document."""
    call_id = id or server_id()
    content: dict[str, Any] = {"type": "web_fetch_tool_result_error", "error_code": error}
    if error is None:
        document = {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": text},
            "title": title or None,
            "citations": {"enabled": True},
        }
        content = {
            "type": "web_fetch_result", "url": url, "content": document,
            "retrieved_at": RETRIEVED_AT,
        }  # fmt: skip
    return [
        {"type": "server_tool_use", "id": call_id, "name": "web_fetch", "input": {"url": url}},
        {"type": "web_fetch_tool_result", "tool_use_id": call_id, "content": content},
    ]


def paused_search(query: str, *, id: str | None = None) -> list[dict[str, Any]]:
    """Return a search call the API paused before running it: its result comes on continuing."""
    return [web_search(query, [], id=id)[0]]


def cited(text: str, result: dict[str, Any], cited_text: str | None = None) -> dict[str, Any]:
    """Return a text block citing a search result, as the API splits cited sentences out."""
    quote = cited_text or f"The text of {result['title']}."
    citation = {
        "type": "web_search_result_location",
        "url": result["url"],
        "title": result["title"],
        "encrypted_index": _seal({"url": result["url"], "cited": quote}),
        "cited_text": quote,
    }
    return {"type": "text", "text": text, "citations": [citation]}


def server_tool_usage(content: list[dict[str, Any]]) -> dict[str, int]:
    """Count the searches and fetches a response made, as usage.server_tool_use reports them."""
    ran = {b["tool_use_id"]: b for b in content if b.get("type") in RESULT_TYPES}
    counts = {"web_search_requests": 0, "web_fetch_requests": 0}
    for block in content:
        result = ran.get(block.get("id", "")) if block.get("type") == "server_tool_use" else None
        if result is None:
            continue
        failed = isinstance(result["content"], dict) and "error_code" in result["content"]
        if not failed:
            counts[f"{block['name']}_requests"] += 1
    return counts


# --- how the fake answers ---------------------------------------------------------------------


def offered(tools: Any) -> dict[str, dict[str, Any]]:
    """Return the web tools a request offers, by name."""
    return {
        t["name"]: t
        for t in tools or []
        if isinstance(t, dict) and t.get("type") in SEARCH_TYPES + FETCH_TYPES
    }


def within_limits(
    content: list[dict[str, Any]], tools: dict[str, dict[str, Any]], messages: list[Any]
) -> list[dict[str, Any]] | None:
    """Return the scripted content as the API would run it under the request's tools.

    A call past its tool's max_uses gets max_uses_exceeded; a page fetched whose URL the
    conversation never showed gets url_not_in_prior_context. None: the script calls a web tool
    the request does not offer, which the real API never does.
    """
    used: dict[str, int] = {}
    names = {b["id"]: b["name"] for b in content if b.get("type") == "server_tool_use"}
    if any(name not in tools for name in names.values()):
        return None
    history = json.dumps(messages, ensure_ascii=False)
    # A paused call, continued: its result answers a call of the request's last message.
    last = messages[-1].get("content") if messages else None
    for block in last if isinstance(last, list) else []:
        if isinstance(block, dict) and block.get("type") == "server_tool_use":
            names.setdefault(block["id"], block["name"])
    out = []
    for block in content:
        if block.get("type") in RESULT_TYPES:
            name = names[block["tool_use_id"]]
            used[name] = used.get(name, 0) + 1
            limit = tools[name].get("max_uses")
            code = None
            if limit is not None and used[name] > limit:
                code = "max_uses_exceeded"
            elif name == "web_fetch" and not _url_shown(block, history):
                code = "url_not_in_prior_context"
            if code is not None:
                error_type = f"{name}_tool_result_error"
                block = {**block, "content": {"type": error_type, "error_code": code}}
        out.append(block)
    return out


def _url_shown(block: dict[str, Any], history: str) -> bool:
    """Tell whether a fetched URL appeared earlier: in the user's words or a prior result."""
    content = block.get("content") or {}
    url = content.get("url") if isinstance(content, dict) else None
    return url is None or url in history


def validate_tools(tools: Any) -> None:
    """Check the web tools' definitions as the API does."""
    for k, tool in enumerate(tools or []):
        if not isinstance(tool, dict) or "type" not in tool:
            continue
        kind = tool["type"]
        if str(kind).startswith("web_search") and kind not in SEARCH_TYPES:
            raise WebInvalid(f"tools.{k}.type: unknown tool type {kind!r}")
        if str(kind).startswith("web_fetch") and kind not in FETCH_TYPES:
            raise WebInvalid(f"tools.{k}.type: unknown tool type {kind!r}")
        if kind not in SEARCH_TYPES + FETCH_TYPES:
            continue
        expected = "web_search" if kind in SEARCH_TYPES else "web_fetch"
        if tool.get("name") != expected:
            raise WebInvalid(f"tools.{k}.name: Input should be '{expected}'")
        uses = tool.get("max_uses")
        if uses is not None and (not isinstance(uses, int) or uses < 1):
            raise WebInvalid(f"tools.{k}.max_uses: Input should be greater than or equal to 1")
        location = tool.get("user_location")
        if location is not None and (
            kind not in SEARCH_TYPES
            or location.get("type") != "approximate"
            or set(location) - {"type", "city", "region", "country", "timezone"}
        ):
            raise WebInvalid(f"tools.{k}.user_location: invalid approximate location")
        allowed = {"type", "name", "max_uses", "allowed_domains", "blocked_domains",
                   "cache_control", "user_location", "citations", "max_content_tokens"}  # fmt: skip
        if extra := set(tool) - allowed:
            raise WebInvalid(f"tools.{k}.{sorted(extra)[0]}: Extra inputs are not permitted")


def validate_blocks(messages: list[dict[str, Any]], tools: dict[str, dict[str, Any]]) -> None:
    """Check the web blocks of merged messages as the API does; raise WebInvalid."""
    for i, message in enumerate(messages):
        blocks = message["content"] if isinstance(message["content"], list) else []
        last = i == len(messages) - 1
        calls: dict[str, str] = {}
        answered: set[str] = set()
        for j, block in enumerate(blocks):
            kind, where = block.get("type"), f"messages.{i}.content.{j}"
            if kind in ("server_tool_use", *RESULT_TYPES) and message["role"] != "assistant":
                raise WebInvalid(f"{where}: {kind} blocks can only be in assistant messages")
            if kind == "server_tool_use":
                _check_call(where, block, tools)
                calls[block["id"]] = block["name"]
            elif kind in RESULT_TYPES:
                if calls.get(block.get("tool_use_id", "")) != kind.removesuffix("_tool_result"):
                    raise WebInvalid(
                        f"{where}: {kind} block(s) provided when corresponding server_tool_use "
                        "block with matching tool_use_id is not present in the same message"
                    )
                answered.add(block["tool_use_id"])
                _check_result(where, block)
            elif kind == "text":
                _check_citations(where, block)
        missing = [c for c in calls if c not in answered]
        if missing and not last:
            raise WebInvalid(
                f"messages.{i}: server_tool_use ids were found without a corresponding result "
                f"block in the same message: {', '.join(missing)}"
            )


def _check_call(where: str, block: dict[str, Any], tools: dict[str, dict[str, Any]]) -> None:
    """Check a server_tool_use block: its id, its input, and that its tool is offered."""
    if not str(block.get("id", "")).startswith("srvtoolu_"):
        raise WebInvalid(f"{where}.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'")
    if block.get("name") not in tools:
        raise WebInvalid(
            f"{where}: server_tool_use block with name {block.get('name')!r} requires the "
            "corresponding tool in `tools`"
        )
    if not isinstance(block.get("input"), dict):
        raise WebInvalid(f"{where}.input: Input should be a valid dictionary")


def _check_result(where: str, block: dict[str, Any]) -> None:
    """Check a result's encrypted parts came from this API, unaltered."""
    content = block.get("content")
    if block["type"] == "web_search_tool_result" and isinstance(content, list):
        for k, result in enumerate(content):
            sealed = _unseal(result.get("encrypted_content"))
            if sealed is None or sealed.get("url") != result.get("url"):
                raise WebInvalid(
                    f"{where}.content.{k}.encrypted_content: invalid encrypted content"
                )
            if set(result) - {"type", "title", "url", "encrypted_content", "page_age"}:
                raise WebInvalid(f"{where}.content.{k}: Extra inputs are not permitted")


def _check_citations(where: str, block: dict[str, Any]) -> None:
    """Check a text block's web citations point where their sealed index says."""
    for k, citation in enumerate(block.get("citations") or []):
        if citation.get("type") != "web_search_result_location":
            continue
        sealed = _unseal(citation.get("encrypted_index"))
        if sealed is None or sealed.get("url") != citation.get("url"):
            raise WebInvalid(f"{where}.citations.{k}.encrypted_index: invalid encrypted index")
        if "title" not in citation:
            raise WebInvalid(f"{where}.citations.{k}.title: Field required")
