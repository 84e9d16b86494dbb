"""The Models API of the fake Messages API server, and the account errors the real API gives.

GET /v1/models/{model_id} answers a ModelInfo as the real API does (every field the SDK's
anthropic.types.ModelInfo declares, capabilities included); an unknown id gets 404
not_found_error "model: <id>", the API's words for a model it does not know.
"""

from typing import Any

# The real API's answers to an account without credits, and a key without permission.
NO_CREDITS_MESSAGE = (
    "Your credit balance is too low to access the Anthropic API. "
    "Please go to Plans & Billing to upgrade or purchase credits."
)
NO_PERMISSION_MESSAGE = "Your API key does not have permission to use the specified resource."
CREATED_AT = "2025-05-14T00:00:00Z"


def _supported(value: bool = True) -> dict[str, bool]:
    return {"supported": value}


def capabilities() -> dict[str, Any]:
    """Return a current Sonnet's capabilities, with every key the API always sends."""
    return {
        "batch": _supported(),
        "citations": _supported(),
        "code_execution": _supported(),
        "context_management": {
            "supported": True,
            "clear_thinking_20251015": _supported(),
            "clear_tool_uses_20250919": _supported(),
            "compact_20260112": _supported(),
        },
        "effort": {
            "supported": True,
            "low": _supported(),
            "medium": _supported(),
            "high": _supported(),
            "max": _supported(),
            "xhigh": _supported(False),
        },
        "image_input": _supported(),
        "pdf_input": _supported(),
        "server_tools": {
            "supported": True,
            "code_execution": _supported(),
            "web_search": _supported(),
        },
        "structured_outputs": _supported(),
        "thinking": {
            "supported": True,
            "types": {
                "adaptive": _supported(),
                "between_tools": _supported(),
                "disabled": _supported(),
                "enabled": _supported(),
            },
        },
    }


def model_info(model_id: str, lifecycle: str = "active") -> dict[str, Any]:
    """Return the API's ModelInfo for a model id, in the given lifecycle stage."""
    retired = lifecycle != "active"
    return {
        "type": "model",
        "id": model_id,
        "display_name": model_id.removeprefix("claude-").replace("-", " ").title(),
        "created_at": CREATED_AT,
        "lifecycle": lifecycle,
        "deprecated_at": "2026-01-05T00:00:00Z" if retired else None,
        "retires_at": "2026-07-05T00:00:00Z" if retired else None,
        "line": "sonnet" if "sonnet" in model_id else None,
        "max_input_tokens": 200_000,
        "max_tokens": 64_000,
        "capabilities": capabilities(),
    }


def unknown_model_message(model_id: str) -> str:
    """Return the API's message for a model id it does not know."""
    return f"model: {model_id}"
