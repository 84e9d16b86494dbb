"""A fake OpenAI-compatible transcription server: POST /v1/audio/transcriptions.

It speaks the API as OpenAI does: a multipart/form-data upload with `file` and `model`
(and optionally `response_format`, `language`, `prompt`, `temperature`), a Bearer key, and
an answer of JSON `{"text": ...}` (json, verbose_json) or the bare text (text). Errors come
in OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, with its status codes;
a wrong key's message quotes part of the key, as OpenAI's does. The official `openai` SDK
talks to it unmodified through `base_url`. It records every request, and answers with the
transcripts a test scripts (or DEFAULT_TRANSCRIPT).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

from tests.fakes.local_server import LocalServer

# OpenAI's limit on an uploaded audio file.
MAX_FILE_BYTES = 25 * 1024 * 1024
# The extensions OpenAI's transcription endpoint takes (it reads the format from the name).
AUDIO_EXTENSIONS = frozenset(
    {"flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav", "webm"}
)
RESPONSE_FORMATS = frozenset({"json", "text", "srt", "verbose_json", "vtt"})
DEFAULT_TRANSCRIPT = "Remind me on Friday at nine."


@dataclass
class Transcription:
    """One request the server was asked: its form fields, file and credentials."""

    model: str
    response_format: str
    file_name: str
    content_type: str
    data: bytes
    authorization: str | None
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        """Return the hash of the uploaded file."""
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class Failure:
    """A scripted error answer: status, type, message and code, as OpenAI words them."""

    status: int
    message: str = "The server had an error while processing your request. Sorry about that!"
    type: str = "server_error"
    code: str | None = None


class _Refused(Exception):
    """An error answer for the request being read."""

    def __init__(self, failure: Failure, param: str | None = None):
        super().__init__(failure.message)
        self.failure, self.param = failure, param


def _invalid(message: str, param: str | None = None, code: str | None = None) -> _Refused:
    return _Refused(Failure(400, message, "invalid_request_error", code), param)


class FakeTranscription(LocalServer):
    """The transcription server on 127.0.0.1; script(...) what it answers next."""

    # Bigger than OpenAI's limit, so the 413 below is the server's answer, not aiohttp's.
    max_request_bytes = 2 * MAX_FILE_BYTES

    def __init__(self, api_key: str | None = None, models: tuple[str, ...] = ("whisper-1",)):
        super().__init__()
        self.api_key = api_key or f"sk-test-{secrets.token_hex(16)}"
        self.models = models
        self.requests: list[Transcription] = []  # accepted or not, in order
        self._script: list[str | Failure] = []
        self.gate: asyncio.Event | None = None  # when set up, answers wait until it is set

    def add_routes(self, app: web.Application) -> None:
        """Add this server's routes to its app."""
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)

    @property
    def base_url(self) -> str:
        """Return the value for AsyncOpenAI(base_url=...) and TRANSCRIPTION_BASE_URL."""
        return f"{self.origin}/v1"

    def script(self, *answers: str | Failure) -> None:
        """Queue what the next requests answer: a transcript (maybe empty) or a Failure."""
        self._script.extend(answers)

    def fail_always(self, failure: Failure) -> None:
        """Answer every request from now on with the failure."""
        self._script = [failure] * 1000

    async def _transcribe(self, request: web.Request) -> web.Response:
        try:
            self._check_key(request.headers.get("Authorization"))
            form = await _read_form(request)
            asked = self._recorded(form, request.headers.get("Authorization"))
            answer = self._script.pop(0) if self._script else DEFAULT_TRANSCRIPT
            if isinstance(answer, Failure):
                raise _Refused(answer)
            if self.gate is not None:
                await self.gate.wait()
        except _Refused as refused:
            return _error(refused.failure, refused.param)
        if asked.response_format == "text":
            return web.Response(text=answer + "\n", content_type="text/plain")
        body: dict[str, Any] = {"text": answer}
        if asked.response_format == "verbose_json":
            body |= {"task": "transcribe", "language": "english", "duration": 2.35}
        return web.json_response(body, headers={"x-request-id": _request_id()})

    def _check_key(self, authorization: str | None) -> None:
        if not authorization:
            raise _Refused(
                Failure(
                    401,
                    "You didn't provide an API key. You need to provide your API key in an "
                    "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                    "invalid_request_error",
                )
            )
        given = authorization.removeprefix("Bearer ")
        if given != self.api_key:
            shown = f"{given[:3]}{'*' * 20}{given[-4:]}"  # as OpenAI masks it
            raise _Refused(
                Failure(
                    401,
                    f"Incorrect API key provided: {shown}. You can find your API key at "
                    "https://platform.openai.com/account/api-keys.",
                    "invalid_request_error",
                    "invalid_api_key",
                )
            )

    def _recorded(self, form: dict[str, Any], authorization: str | None) -> Transcription:
        """Check the form as OpenAI does, record it, and return it."""
        upload = form.get("file")
        if not isinstance(upload, tuple):
            raise _invalid("1 validation error for Request\nbody -> file\n  field required", "file")
        name, content_type, data = upload
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        asked = Transcription(
            model=fields.get("model", ""),
            response_format=fields.get("response_format", "json"),
            file_name=name,
            content_type=content_type,
            data=data,
            authorization=authorization,
            fields=fields,
        )
        self.requests.append(asked)
        _check_fields(asked, self.models)
        return asked


def _check_fields(asked: Transcription, models: tuple[str, ...]) -> None:
    """Refuse what OpenAI refuses: no model, an unknown one, a bad format, size or file."""
    if not asked.model:
        raise _invalid("you must provide a model parameter", "model")
    if asked.model not in models:
        raise _Refused(
            Failure(
                404,
                f"The model `{asked.model}` does not exist or you do not have access to it.",
                "invalid_request_error",
                "model_not_found",
            )
        )
    if asked.response_format not in RESPONSE_FORMATS:
        raise _invalid(f"'{asked.response_format}' is not one of {sorted(RESPONSE_FORMATS)} - "
                       "'response_format'", "response_format")  # fmt: skip
    if len(asked.data) > MAX_FILE_BYTES:
        raise _Refused(
            Failure(
                413,
                f"Maximum content size limit ({MAX_FILE_BYTES}) exceeded "
                f"({len(asked.data)} bytes read)",
                "server_error",
            )
        )
    extension = asked.file_name.rsplit(".", 1)[-1].lower() if "." in asked.file_name else ""
    if extension not in AUDIO_EXTENSIONS:
        raise _invalid(f"Invalid file format. Supported formats: {sorted(AUDIO_EXTENSIONS)}",
                       "file", "invalid_value")  # fmt: skip
    # OGG starts "OggS"; MP4 (and M4A) has "ftyp" at byte 4; anything else is not audio here.
    if not (asked.data.startswith(b"OggS") or asked.data[4:8] == b"ftyp"):
        raise _invalid("Audio file might be corrupted or unsupported", "file", "invalid_value")


async def _read_form(request: web.Request) -> dict[str, Any]:
    """Read a multipart form: fields as text, the file as (name, content type, bytes)."""
    if not request.content_type.startswith("multipart/form-data"):
        raise _invalid(
            "Invalid Content-Type header (application/json), expected multipart/form-data. "
            "(HINT: If you're using curl, you can pass -F 'file=@<path/to/file>' to upload "
            "a file.)"
        )
    form: dict[str, Any] = {}
    reader = await request.multipart()
    async for part in reader:
        if not isinstance(part, BodyPartReader) or part.name is None:
            continue
        data = await part.read()
        if part.filename is not None:
            content_type = part.headers.get("Content-Type", "application/octet-stream")
            form[part.name] = (part.filename, content_type, bytes(data))
        else:
            form[part.name] = bytes(data).decode()
    return form


def _request_id() -> str:
    return f"req_{secrets.token_hex(16)}"


def _error(failure: Failure, param: str | None = None) -> web.Response:
    """Answer with OpenAI's error shape; retryable ones say how soon, as OpenAI's may."""
    headers = {"x-request-id": _request_id()}
    if failure.status in (408, 409, 429) or failure.status >= 500:
        # The SDK honours retry-after-ms, which keeps its retries fast in tests.
        headers["retry-after-ms"] = "10"
    error = {"message": failure.message, "type": failure.type, "param": param,
             "code": failure.code}  # fmt: skip
    return web.json_response({"error": error}, status=failure.status, headers=headers)
