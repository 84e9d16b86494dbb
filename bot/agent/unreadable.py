"""Files the API refuses: leave them out of the history, so the next request is accepted."""

import re
from collections.abc import Sequence
from typing import Any

from anthropic import BadRequestError

from bot.agent.attachments import shown
from bot.conversations.content import is_tool_result
from bot.conversations.file_refs import FileRef, file_ref, file_refs, is_file_block
from bot.conversations.snapshot import StoredTurn

# A refusal about a file, in the API's wordings ("Could not process image", "... PDF pages").
MEDIA_ERROR = re.compile(r"image|pdf|document|media|base64", re.IGNORECASE)
# The API's field path in front of a message ("messages.0.content.1.image.source: ...").
_FIELD_PATH = re.compile(r"^[\w.]+: ")


def api_reason(error: BadRequestError) -> str:
    """Return the API's own words of an error, without its field path."""
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error")
    said = detail.get("message") if isinstance(detail, dict) else None
    message = said if isinstance(said, str) else error.message
    return _FIELD_PATH.sub("", message).strip().rstrip(".")


def unanswered_with_files(turns: Sequence[StoredTurn]) -> list[StoredTurn]:
    """Return the user's newest turns not yet answered that carry files (new to the API)."""
    found = []
    for turn in reversed(turns):
        if turn.role != "user" or is_tool_result(turn.content):
            break
        if file_refs(turn.content):
            found.append(turn)
    return found[::-1]


def without_files(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return a turn's content with each file replaced by a note that it could not be read."""
    return [
        {"type": "text", "text": f"{file_ref(b).label[:-1]}; the model could not read it]"}
        if is_file_block(b)
        else b
        for b in content
    ]


def refused_files(turns: Sequence[StoredTurn], error: BadRequestError) -> list[StoredTurn]:
    """Return the turns whose new files the error is about, or [] if it is about none."""
    if not MEDIA_ERROR.search(api_reason(error)):
        return []
    return unanswered_with_files(turns)


def unreadable_note(refs: Sequence[FileRef], reason: str) -> str:
    """Tell the user the model could not read their files, and that they were left out."""
    names = ", ".join(shown(ref.name) for ref in refs)
    them = "it" if len(refs) == 1 else "them"
    return (
        f"The model couldn't read {names} ({reason}), so I've left {them} out of our "
        "conversation. A screenshot or another format may work."
    )
