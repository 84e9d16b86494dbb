"""Speech to text through an OpenAI-compatible server: POST {base}/audio/transcriptions.

The official OpenAI SDK speaks the API (multipart upload, retries, error bodies), so the
same code works against OpenAI, Groq or a self-hosted server that copies the API.
"""

from typing import TYPE_CHECKING, Protocol

from memory.openai_client import LazyOpenAI

if TYPE_CHECKING:
    from openai import APIStatusError

# A few minutes of speech takes seconds; a stuck server should not hold the chat much longer.
TRANSCRIPTION_TIMEOUT_SECONDS = 60
# The SDK retries connection errors, 408, 409, 429 and 5xx, with its own backoff.
TRANSCRIPTION_MAX_RETRIES = 2


class TranscriptionFailed(Exception):
    """The server did not transcribe the audio; the message names the cause, never the key."""


class Transcriber(Protocol):
    """Turns speech into text."""

    async def transcribe(self, audio: bytes, file_name: str, media_type: str) -> str:
        """Return what was said (maybe empty); raise TranscriptionFailed."""
        ...

    async def close(self) -> None:
        """Release the connections."""
        ...


def _cause(error: "APIStatusError") -> str:
    """Describe a refusal by its status, type and code: the message may quote the key."""
    parts = [f"HTTP {error.status_code}", error.type or "", error.code or ""]
    return " ".join(part for part in parts if part)


class OpenAITranscriber:
    """The Transcriber of an OpenAI-compatible server, through the official SDK."""

    def __init__(self, base_url: str, api_key: str, model: str):
        self._model = model
        self._client = LazyOpenAI(
            base_url, api_key, TRANSCRIPTION_TIMEOUT_SECONDS, TRANSCRIPTION_MAX_RETRIES
        )

    async def transcribe(self, audio: bytes, file_name: str, media_type: str) -> str:
        """Upload the audio and return the transcript's text, stripped."""
        client = self._client.get()
        from openai import APIConnectionError, APIStatusError, OpenAIError  # loaded by get()

        try:
            result = await client.audio.transcriptions.create(
                model=self._model, file=(file_name, audio, media_type), response_format="json"
            )
        except APIStatusError as error:
            raise TranscriptionFailed(_cause(error)) from None
        except APIConnectionError as error:  # timeouts too
            raise TranscriptionFailed(type(error).__name__) from None
        except OpenAIError as error:  # an answer the SDK could not read
            raise TranscriptionFailed(type(error).__name__) from None
        return (result.text or "").strip()

    async def close(self) -> None:
        """Close the SDK's HTTP client, if a voice note ever opened one."""
        await self._client.close()


def openai_transcriber(base_url: str, api_key: str, model: str) -> OpenAITranscriber:
    """Return the transcriber of the server at base_url (e.g. https://api.openai.com/v1)."""
    return OpenAITranscriber(base_url, api_key, model)
