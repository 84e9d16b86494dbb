"""Files the API refuses, or that make the prompt too long: leave them out of the history.

A file left out becomes a note in its stored turn, so the next request is accepted and the
model knows a file was there; the user is told which file, and why.
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any

from anthropic import BadRequestError

from bot.conversations.blocks import Content, FileKind, text_block
from bot.conversations.content import is_tool_result
from bot.conversations.file_refs import FileRef, file_ref, file_refs
from bot.conversations.snapshot import StoredTurn
from bot.media.notices import FilesLeftOut, LeftOutFile, LeftOutWhy

# A refusal about a file, in the API's wordings ("Could not process image", "... PDF pages").
MEDIA_ERROR = re.compile(r"image|pdf|document|media|base64", re.IGNORECASE)
# The API's field path in front of a message ("messages.0.content.1.image.source: ...").
_FIELD_PATH = re.compile(r"^[\w.]+: ")
# Which kind of file a refusal without a field path speaks of.
_KIND_SAID = re.compile(r"image|pdf|document", re.IGNORECASE)
# The block a field path names: which message, which block of its content.
_BLOCK_PATH = re.compile(r"^messages\.(\d+)\.content\.(\d+)\.")
# The API's words when the request is over the model's context window (400, invalid request).
PROMPT_TOO_LONG = "prompt is too long"
# What a left-out file's note in its stored turn says, for the model.
NOTE_OF = {
    LeftOutWhy.UNREADABLE: "the model could not read it",
    LeftOutWhy.TOO_LONG: "left out: too long for the model",
}


def api_message(error: BadRequestError) -> str:
    """Return the API's message of an error, as it came (with its field path)."""
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error")
    said = detail.get("message") if isinstance(detail, dict) else None
    return said if isinstance(said, str) else error.message


def api_reason(error: BadRequestError) -> str:
    """Return the API's own words of an error, without its field path."""
    return _FIELD_PATH.sub("", api_message(error)).strip().rstrip(".")


def is_prompt_too_long(error: BadRequestError) -> bool:
    """Tell whether the API refused the request as over the model's context window."""
    return api_message(error).strip().lower().startswith(PROMPT_TOO_LONG)


def unanswered_with_files(turns: Sequence[StoredTurn]) -> list[StoredTurn]:
    """Return the user's newest turns not yet answered that carry files (new to the API)."""
    found = []
    for turn in reversed(turns):
        if turn.role != "user" or is_tool_result(turn.content):
            break
        if file_refs(turn.content):
            found.append(turn)
    return found[::-1]


def sent_files(
    turns: Sequence[StoredTurn], files: Mapping[str, str | None]
) -> list[tuple[StoredTurn, FileRef]]:
    """Return every file the request carries (its bytes were loaded), oldest first."""
    return [
        (turn, ref)
        for turn in turns
        for ref in file_refs(turn.content)
        if files.get(ref.sha256) is not None
    ]


def named_file(
    error: BadRequestError, request: Mapping[str, Any], files: Mapping[str, str | None]
) -> str | None:
    """Return the hash of the file whose block the error's field path names, if it names one."""
    match = _BLOCK_PATH.match(api_message(error))
    if match is None:
        return None
    message, index = int(match.group(1)), int(match.group(2))
    try:
        block = request["messages"][message]["content"][index]
        data = block["source"]["data"]
    except (IndexError, KeyError, TypeError):
        return None
    return next((sha for sha, sent in files.items() if sent is not None and sent == data), None)


def to_leave_out(
    turns: Sequence[StoredTurn],
    error: BadRequestError,
    request: Mapping[str, Any],
    files: Mapping[str, str | None],
) -> list[tuple[StoredTurn, FileRef]]:
    """Return the files to leave out for the error, or [] if it is about no file.

    Too long: the newest file. A refusal naming a file's block: that file (the rest of an
    album stays). Another refusal about media: the newest unanswered turns' files of the
    kind it names (images, or PDFs), else all of them.
    """
    if is_prompt_too_long(error):
        return sent_files(turns, files)[-1:]
    if not MEDIA_ERROR.search(api_reason(error)):
        return []
    if (sha := named_file(error, request, files)) is not None:
        return [(turn, ref) for turn, ref in sent_files(turns, files) if ref.sha256 == sha]
    new = [(turn, ref) for turn in unanswered_with_files(turns) for ref in file_refs(turn.content)]
    # Unnamed: the new files of the kind the refusal speaks of ("Could not process PDF").
    kind = _KIND_SAID.search(api_reason(error))
    said = FileKind.IMAGE if kind and kind.group(0).lower() == "image" else FileKind.DOCUMENT
    return [(turn, ref) for turn, ref in new if kind and ref.kind == said] or new


def without_file(content: Content, sha256: str, why: LeftOutWhy) -> Content:
    """Return a turn's content with the file of this hash replaced by a note saying why."""
    return [
        text_block(f"{file_ref(b).label[:-1]}; {NOTE_OF[why]}]")
        if b["type"] == "file" and b["sha256"] == sha256
        else b
        for b in content
    ]


def new_file_refs(turns: Sequence[StoredTurn]) -> list[FileRef]:
    """Return the files of the user's newest unanswered turns, in the order sent."""
    return [ref for turn in unanswered_with_files(turns) for ref in file_refs(turn.content)]


def left_out_file(ref: FileRef, sent: Sequence[FileRef]) -> LeftOutFile:
    """Return a file left out, with its place among those sent when others share its name.

    Photos have no names of their own: in an album every one is "photo.jpg".
    """
    if sum(other.name == ref.name for other in sent) < 2:
        return LeftOutFile(ref.name)
    place = next(i for i, other in enumerate(sent, 1) if other.sha256 == ref.sha256)
    return LeftOutFile(ref.name, place, len(sent))


def left_out_notice(
    error: BadRequestError, refs: Sequence[FileRef], sent: Sequence[FileRef]
) -> FilesLeftOut:
    """Return the notice of the files left out for the error: unreadable, or too long."""
    why = LeftOutWhy.TOO_LONG if is_prompt_too_long(error) else LeftOutWhy.UNREADABLE
    return FilesLeftOut(why, tuple(left_out_file(ref, sent) for ref in refs), api_reason(error))


def left_out_record(notice: FilesLeftOut) -> str:
    """Return the answer stored when files were left out: the model later knows what happened."""
    names = ", ".join(dict.fromkeys(file.name for file in notice.files))
    if notice.why == LeftOutWhy.TOO_LONG:
        what = f"{names} made our conversation too long for the model"
    else:
        what = f"The model could not read {names}"
    return f"[{what} ({notice.reason}), so I left them out and told the user.]"
