"""Voice notes and round videos, end to end: real PTB, the real openai SDK, the fakes.

Every test runs on both engines (the database_url fixture). The notes are real OGG/Opus
and MP4 files (tests/data/README.md says how they were made).
"""

import hashlib
import logging
from pathlib import Path

import pytest

from tests.buttons import button, last_to, press
from tests.fakes.anthropic_server import text
from tests.fakes.transcription_server import Failure, FakeTranscription
from tests.files_support import calls_to, stored_contents, user_texts
from tests.harness import OWNER, STRANGER

DATA = Path(__file__).resolve().parent / "data"
VOICE = (DATA / "voice-friday-at-nine.ogg").read_bytes()
VIDEO_NOTE = (DATA / "video-note-friday-at-nine.mp4").read_bytes()
HEARD = "Remind me on Friday at nine."
MARK = "[Transcribed from the user's voice note; times and names may be misheard:]"
OFF = (
    "I can't listen to voice notes here: the bot's owner can turn them on by setting "
    "TRANSCRIPTION_BASE_URL, TRANSCRIPTION_API_KEY and TRANSCRIPTION_MODEL. Please type it "
    "for now."
)


@pytest.fixture
async def speech():
    """Start the fake transcription server."""
    async with FakeTranscription(models=("gpt-4o-mini-transcribe",)) as server:
        yield server


@pytest.fixture
def start_voice_bot(start_bot, speech):
    """Return a function that starts a bot with transcription set up on the fake."""

    async def start(**overrides):
        overrides = {
            "transcription_base_url": speech.base_url,
            "transcription_api_key": speech.api_key,
            "transcription_model": "gpt-4o-mini-transcribe",
            **overrides,
        }
        return await start_bot(**overrides)

    return start


def replies(bot) -> list[dict]:
    """Return what the bot sent the owner, as Telegram's Message objects."""
    return [m["result"] for m in bot.tg.sent if m["chat_id"] == OWNER]


async def send_voice(bot, data: bytes = VOICE, kind: str = "voice", **fields) -> dict:
    """Send a note as the owner, wait until it is handled, and return its update."""
    fields.setdefault("duration", 2)
    update = bot.tg.push_media(OWNER, kind, data=data, fields=fields)
    await bot.idle()
    return update


async def test_a_voice_note_is_transcribed_shown_collapsed_and_answered_as_typed(
    start_voice_bot, speech
):
    bot = await start_voice_bot()
    bot.model.script(text("I'll remind you on Friday at 09:00 — is that right?"))
    speech.script(HEARD)
    update = await send_voice(bot)

    [asked] = speech.requests
    assert (asked.model, asked.response_format) == ("gpt-4o-mini-transcribe", "json")
    assert (asked.file_name, asked.content_type, asked.data) == ("voice.ogg", "audio/ogg", VOICE)
    assert asked.authorization == f"Bearer {speech.api_key}"
    shown, answer = replies(bot)
    # The transcript first, collapsed in an expandable quote the user can open to check.
    assert shown["text"] == f"Your voice note, as I heard it:\n{HEARD}"
    quote = [e for e in shown["entities"] if e["type"] == "expandable_blockquote"]
    assert [shown["text"][q["offset"] : q["offset"] + q["length"]] for q in quote] == [HEARD]
    assert answer["text"] == "I'll remind you on Friday at 09:00 — is that right?"
    # The model gets it as typed, marked as a transcript.
    [note, time, *said] = bot.model.last_user_text().splitlines()
    assert note == "[voice note, 0:02]" and time.startswith("[") and said == [MARK, HEARD]
    assert bot.model.invalid == []
    # Stored by reference, like photos and PDFs; its bytes are in the local cache.
    [user, _] = await stored_contents(bot.services.engine)
    sha256 = hashlib.sha256(VOICE).hexdigest()
    assert user[0] == {
        "type": "voice", "kind": "voice", "media_type": "audio/ogg", "sha256": sha256,
        "file_id": update["message"]["voice"]["file_id"], "duration": 2, "size": len(VOICE),
        "transcribed": True,
    }  # fmt: skip
    assert (bot.settings.file_cache_dir / sha256).read_bytes() == VOICE


async def test_a_round_video_is_transcribed_from_its_mp4(start_voice_bot, speech):
    bot = await start_voice_bot()
    await send_voice(bot, VIDEO_NOTE, "video_note", duration=3)
    [asked] = speech.requests
    assert (asked.file_name, asked.content_type, asked.data) == (
        "video_note.mp4", "video/mp4", VIDEO_NOTE,
    )  # fmt: skip
    shown, _ = replies(bot)
    assert shown["text"].startswith("Your round video, as I heard it:\n")
    assert "[Transcribed from the user's round video;" in bot.model.last_user_text()


async def test_off_until_configured_answers_one_line_and_keeps_the_note(start_bot):
    bot = await start_bot()
    update = await send_voice(bot)
    assert [m["text"] for m in replies(bot)] == [OFF]
    assert bot.model.requests == [] and bot.tg.downloads == []
    # Nothing is lost: the note is kept by its file id, with the answer the user got.
    [user, assistant] = await stored_contents(bot.services.engine)
    assert user[0]["file_id"] == update["message"]["voice"]["file_id"]
    assert user[0]["transcribed"] is False and "sha256" not in user[0]
    assert assistant == [{"type": "text", "text": OFF}]
    await bot.say(OWNER, "Did you get my voice note?")
    said = user_texts(bot.model.last_request)
    assert "[voice note, 0:02; not transcribed]" in said
    assert bot.model.invalid == []


async def test_a_note_over_the_limits_is_refused_before_download(start_voice_bot, speech):
    bot = await start_voice_bot(voice_max_seconds=60, voice_max_mb=1)
    await send_voice(bot, duration=61)
    bot.tg.push_media(OWNER, "voice", file_size=2 * 1024 * 1024, fields={"duration": 30})
    await bot.idle()
    assert [m["text"] for m in replies(bot)] == [
        "Your voice note is 1:01 long; I can transcribe up to 1:00. Please send a shorter "
        "one, or type it.",
        "Your voice note is 2.0 MB; I can transcribe up to 1 MB. Please send a shorter one, "
        "or type it.",
    ]
    assert calls_to(bot.tg, "getFile") == [] and bot.tg.downloads == []
    assert speech.requests == [] and bot.model.requests == []


async def test_a_failed_or_empty_transcription_gets_a_clear_answer(start_voice_bot, speech, caplog):
    bot = await start_voice_bot()
    speech.script(Failure(400, "Audio file might be corrupted", "invalid_request_error"), "  ")
    await send_voice(bot)
    await send_voice(bot)
    speech.fail_always(Failure(503))
    await send_voice(bot)
    assert [m["text"] for m in replies(bot)] == [
        "I couldn't transcribe your voice note just now; please send it again, or type it.",
        "I couldn't make out any words in your voice note; please send it again, or type it.",
        "I couldn't transcribe your voice note just now; please send it again, or type it.",
    ]
    assert len(speech.requests) == 2 + 3  # a 503 is retried twice by the SDK
    assert bot.model.requests == []
    assert "could not transcribe a voice note: HTTP 503 server_error" in caplog.text


async def test_the_key_never_reaches_logs_or_chats(start_voice_bot, speech, caplog):
    caplog.set_level(logging.DEBUG)
    # Letters in the tail: four digits can turn up in any logged row (a size, a time).
    key = "sk-proj-secret-key-xq7w"
    bot = await start_voice_bot(transcription_api_key=key)
    await send_voice(bot)  # OpenAI's 401 quotes the key's last four characters
    assert "could not transcribe a voice note: HTTP 401" in caplog.text
    assert "xq7w" not in caplog.text
    assert [m["text"] for m in replies(bot)] == [
        "I couldn't transcribe your voice note just now; please send it again, or type it."
    ]


async def test_a_restart_never_transcribes_a_note_again(start_voice_bot, speech):
    bot = await start_voice_bot()
    update = await send_voice(bot)
    await bot.restart()
    # Telegram redelivers an update a stopped process did not confirm: not heard twice.
    bot.tg.push_update({"message": update["message"]})
    await bot.idle()
    await bot.say(OWNER, "What day did I say?")
    assert len(speech.requests) == 1
    assert len(replies(bot)) == 3  # the transcript, its answer, the follow-up's answer
    assert f"{MARK}\n{HEARD}" in user_texts(bot.model.last_request)
    assert bot.model.invalid == []


async def test_delete_my_data_deletes_the_cached_audio_too(start_voice_bot):
    bot = await start_voice_bot()
    await send_voice(bot)
    cache = bot.settings.file_cache_dir
    assert [path.name for path in cache.iterdir()] == [hashlib.sha256(VOICE).hexdigest()]
    await bot.say(OWNER, "/delete_my_data")
    question = last_to(bot, OWNER)
    await press(bot, question, button(question, "Delete"))
    done = bot.tg.message(OWNER, question["message_id"])
    assert "Deleted everything" in done["text"] and "1 cached file" in done["text"]
    assert list(cache.iterdir()) == []


async def test_in_a_group_only_a_note_for_the_bot_is_heard_and_never_a_strangers(
    start_voice_bot, speech
):
    bot = await start_voice_bot()
    group, ann = -100_777, {"user_id": OWNER, "chat_type": "supergroup", "first_name": "Ann"}
    bot.model.script(text("Hello Ann."), text("Friday at 09:00, Ann: right?"))
    await bot.say(group, "@memory_test_bot hi", **ann)
    [greeting] = [m["result"] for m in bot.tg.sent if m["chat_id"] == group]
    spoken = {"data": VOICE, "fields": {"duration": 2}}
    bot.tg.push_media(group, "voice", **spoken, **ann)  # group talk, not for the bot
    bot.tg.push_media(group, "voice", **spoken, reply_to_message=greeting["message_id"], **ann)
    bot.tg.push_media(STRANGER, "voice", **spoken)
    await bot.idle()
    assert len(speech.requests) == 1 and len(bot.tg.downloads) == 1
    shown, answer = [m["result"]["text"] for m in bot.tg.sent if m["chat_id"] == group][1:]
    assert shown == f"Your voice note, as I heard it:\n{HEARD}"
    assert answer == "Friday at 09:00, Ann: right?"
    assert "; from Ann]" in bot.model.last_user_text() and MARK in bot.model.last_user_text()
    [to_stranger] = [m["result"]["text"] for m in bot.tg.sent if m["chat_id"] == STRANGER]
    assert "private bot" in to_stranger


async def test_a_transcript_is_bounded_by_the_notes_length_before_chat_and_model(
    start_voice_bot, speech
):
    bot = await start_voice_bot()
    bot.model.script(text("That was a lot."))
    speech.script("blah " * 40_000)  # a server answering a 2-second note with 200,000 characters
    await send_voice(bot, duration=2)
    shown, answer = replies(bot)  # one transcript message, not 51
    assert answer["text"] == "That was a lot."
    cut = "… [transcript cut: longer than a 0:02 note can say]"
    assert shown["text"].endswith(cut)
    said = bot.model.last_user_text()
    heard = said.split(MARK + "\n", 1)[1]
    assert heard.endswith(cut) and heard.startswith("blah blah")
    # At most 35 characters a second and 300 more: far below what was sent, cut at a word.
    assert len(heard) - len(cut) <= 300 + 2 * 35 and heard[: -len(cut)].endswith("blah")
    # Absolutely too: a long note's transcript is never past 6,000 characters and the mark.
    speech.script("blah " * 40_000)
    bot.model.script(text("Long one."))
    await send_voice(bot, duration=280)
    heard = bot.model.last_user_text().split(MARK + "\n", 1)[1]
    assert len(heard) <= 6_000 + len("… [transcript cut: longer than a 4:40 note can say]")
    assert bot.model.invalid == []


async def test_bidi_controls_of_a_transcript_are_not_shown(start_voice_bot, speech):
    bot = await start_voice_bot()
    speech.script("Remind me on \u202eyadirF\u202c at nine\u200b.")
    await send_voice(bot)
    shown, _ = replies(bot)
    assert shown["text"] == "Your voice note, as I heard it:\nRemind me on yadirF at nine."
