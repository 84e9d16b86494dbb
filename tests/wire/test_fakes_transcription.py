"""FakeTranscription speaks OpenAI's transcription API to the real openai SDK."""

from pathlib import Path

import aiohttp
import openai
import pytest

from bot.media.transcription import TranscriptionFailed, openai_transcriber
from tests.fakes.transcription_server import DEFAULT_TRANSCRIPT, Failure, FakeTranscription

DATA = Path(__file__).resolve().parent.parent / "data"
VOICE = (DATA / "voice-friday-at-nine.ogg").read_bytes()
VIDEO_NOTE = (DATA / "video-note-friday-at-nine.mp4").read_bytes()


@pytest.fixture
async def speech():
    """Start the fake transcription server."""
    async with FakeTranscription() as server:
        yield server


def sdk(server: FakeTranscription, key: str | None = None) -> openai.AsyncOpenAI:
    """Return the real SDK's client on the fake, without retries unless a test wants them."""
    return openai.AsyncOpenAI(
        api_key=key or server.api_key, base_url=server.base_url, max_retries=0
    )


async def test_the_sdk_uploads_a_multipart_form_and_reads_json(speech):
    client = sdk(speech)
    speech.script("Remind me on Friday at nine.")
    result = await client.audio.transcriptions.create(
        model="whisper-1", file=("voice.ogg", VOICE, "audio/ogg"), response_format="json"
    )
    await client.close()
    assert result.text == "Remind me on Friday at nine."
    [asked] = speech.requests
    assert (asked.model, asked.response_format, asked.file_name) == (
        "whisper-1",
        "json",
        "voice.ogg",
    )
    assert asked.content_type == "audio/ogg" and asked.data == VOICE
    assert asked.authorization == f"Bearer {speech.api_key}"


async def test_text_and_verbose_json_answers(speech):
    client = sdk(speech)
    speech.script("plain words", "verbose words")
    text = await client.audio.transcriptions.create(
        model="whisper-1", file=("note.mp4", VIDEO_NOTE, "video/mp4"), response_format="text"
    )
    verbose = await client.audio.transcriptions.create(
        model="whisper-1", file=("voice.oga", VOICE), response_format="verbose_json"
    )
    await client.close()
    assert text.strip() == "plain words"
    assert verbose.text == "verbose words" and verbose.duration == 2.35
    assert [r.response_format for r in speech.requests] == ["text", "verbose_json"]


async def test_errors_come_in_openais_shape_and_status(speech):
    client = sdk(speech, key="sk-wrong-key-1234")
    with pytest.raises(openai.AuthenticationError) as wrong_key:
        await client.audio.transcriptions.create(model="whisper-1", file=("v.ogg", VOICE))
    assert wrong_key.value.code == "invalid_api_key" and "sk-*" in wrong_key.value.message
    await client.close()
    client = sdk(speech)
    with pytest.raises(openai.NotFoundError) as unknown:
        await client.audio.transcriptions.create(model="whisper-9", file=("v.ogg", VOICE))
    assert unknown.value.code == "model_not_found"
    with pytest.raises(openai.BadRequestError) as not_audio:
        await client.audio.transcriptions.create(model="whisper-1", file=("v.ogg", b"hello"))
    assert not_audio.value.param == "file"
    with pytest.raises(openai.BadRequestError) as bad_name:
        await client.audio.transcriptions.create(model="whisper-1", file=("v.txt", VOICE))
    assert "Invalid file format" in bad_name.value.message
    speech.script(Failure(503, type="server_error"))
    with pytest.raises(openai.InternalServerError):
        await client.audio.transcriptions.create(model="whisper-1", file=("v.ogg", VOICE))
    await client.close()


async def test_a_form_without_a_file_or_not_multipart_is_refused(speech):
    async with aiohttp.ClientSession() as session:
        headers = {"Authorization": f"Bearer {speech.api_key}"}
        url = f"{speech.base_url}/audio/transcriptions"
        async with session.post(url, json={"model": "whisper-1"}, headers=headers) as response:
            assert response.status == 400
            assert "multipart/form-data" in (await response.json())["error"]["message"]
        form = aiohttp.FormData({"model": "whisper-1"}, default_to_multipart=True)
        async with session.post(url, data=form, headers=headers) as response:
            assert response.status == 400
            assert (await response.json())["error"]["param"] == "file"


async def test_our_transcriber_retries_a_server_error_and_hides_the_key(speech):
    transcriber = openai_transcriber(speech.base_url, speech.api_key, "whisper-1")
    speech.script(Failure(500), "  Friday at nine  ")
    assert await transcriber.transcribe(VOICE, "voice.ogg", "audio/ogg") == "Friday at nine"
    assert len(speech.requests) == 2  # retried once, honouring retry-after-ms
    await transcriber.close()
    wrong = openai_transcriber(speech.base_url, "sk-secret-abcdefgh", "whisper-1")
    with pytest.raises(TranscriptionFailed) as failed:
        await wrong.transcribe(VOICE, "voice.ogg", "audio/ogg")
    await wrong.close()
    assert str(failed.value) == "HTTP 401 invalid_request_error invalid_api_key"
    assert "efgh" not in str(failed.value) and failed.value.__cause__ is None


async def test_the_default_transcript(speech):
    transcriber = openai_transcriber(speech.base_url, speech.api_key, "whisper-1")
    assert await transcriber.transcribe(VIDEO_NOTE, "note.mp4", "video/mp4") == DEFAULT_TRANSCRIPT
    await transcriber.close()
