"""Figure 13: the time our side adds to a voice note's turn, the transcription service's excluded.

Two private chats say the same thing, "Remind me on Friday at nine.": one types it, the other
sends it as a voice note (the 2.35 s OGG/Opus of tests/data). For each turn: the bot's time
from the update leaving Telegram to the model's request, and for the voice note the
transcription service's own time (its request fully read to its answer ready), which is
taken out. What is left is ours: the redelivery check, getFile and the download, hashing
and caching, the upload through the openai SDK, reading its answer, and sending the
transcript before the turn goes on as typed.
"""

import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from aiohttp import web

from tests.fakes.anthropic_server import text
from tests.fakes.transcription_server import (
    DEFAULT_TRANSCRIPT,
    FakeTranscription,
    Transcription,
)
from tests.harness import FRIEND, OWNER, make_settings
from tests.perf.botrun import PerfBot, database
from tests.perf.common import Config, Row, command, ms
from tests.perf.fakes import TimedAnthropic, TimedTelegram

VOICE = (Path(__file__).resolve().parent.parent / "data" / "voice-friday-at-nine.ogg").read_bytes()
VOICE_SECONDS = 2


class TimedTranscription(FakeTranscription):
    """FakeTranscription that stamps each request fully read and each answer ready."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.timings: list[tuple[float, float]] = []
        self._arrived = 0.0

    def _recorded(self, form: dict[str, Any], authorization: str | None) -> Transcription:
        # The whole upload has been read: what follows is the service's time.
        self._arrived = time.perf_counter()
        return super()._recorded(form, authorization)

    async def _transcribe(self, request: web.Request) -> web.Response:
        response = await super()._transcribe(request)
        self.timings.append((self._arrived, time.perf_counter()))
        return response


@dataclass
class Measured:
    """Per turn, seconds: update out to model request; the service's time for voice notes."""

    text: list[float] = field(default_factory=list)
    voice: list[float] = field(default_factory=list)
    service: list[float] = field(default_factory=list)

    @property
    def ours(self) -> float:
        """Return the median of what a voice note adds on our side, per pair of turns."""
        pairs = zip(self.voice, self.service, self.text, strict=True)
        return median(voice - service - typed for voice, service, typed in pairs)


async def _turn(bot: PerfBot, speech: TimedTranscription, chat_id: int, voice: bool) -> float:
    """Send the words typed or spoken, wait for the reply, return update out to model request."""
    tg, model = bot.tg, bot.model
    model.script(text("Friday 13 March at 09:00: is that right?"))
    replies = 2 if voice else 1  # a voice note's transcript comes first
    before, index = len(tg.sends_to(chat_id)), len(model.timings)
    if voice:
        update = tg.push_media(chat_id, "voice", data=VOICE, fields={"duration": VOICE_SECONDS})
    else:
        update = tg.push_message(chat_id, DEFAULT_TRANSCRIPT)
    await tg.wait_for_sends([chat_id], before + replies)
    await bot.settle()
    return model.timings[index][0] - tg.update_out[update["update_id"]]


async def _new_conversation(bot: PerfBot, chat_id: int) -> None:
    before = len(bot.tg.sends_to(chat_id))
    bot.tg.push_message(chat_id, "/new")
    await bot.tg.wait_for_sends([chat_id], before + 1)
    await bot.settle()


async def measure(config: Config, workdir: Path) -> Measured:
    """Hold `file_repeats` pairs of turns, typed and spoken, each in a new conversation."""
    measured = Measured()
    async with (
        database("sqlite", workdir, config.postgres_url) as url,
        TimedTelegram() as tg,
        TimedAnthropic() as model,
        TimedTranscription() as speech,
    ):
        settings = make_settings(
            tg, model, url, file_cache_dir=workdir / "files",
            transcription_base_url=speech.base_url, transcription_api_key=speech.api_key,
            transcription_model=speech.models[0],
        )  # fmt: skip
        bot = PerfBot(tg, model, settings)
        await bot.start()
        try:
            for _ in range(config.file_repeats):
                measured.text.append(await _turn(bot, speech, OWNER, voice=False))
                measured.voice.append(await _turn(bot, speech, FRIEND, voice=True))
                arrived, answered = speech.timings[-1]
                measured.service.append(answered - arrived)
                for chat_id in (OWNER, FRIEND):
                    await _new_conversation(bot, chat_id)
        finally:
            await bot.stop()
    return measured


def rows(config: Config, measured: Measured) -> list[Row]:
    """Lay out a voice note's turn against the same words typed."""
    voice, typed, service = (median(v) for v in (measured.voice, measured.text, measured.service))
    scene = f"voice note, {len(VOICE) / 1000:.1f} kB OGG/Opus of 2.35 s"
    return [
        Row(
            key="voice",
            figure=f"13. Voice turn, {scene}: bot time from update to model request, voice / "
            "the same words typed (the transcription service's own time), median",
            value=f"{ms(voice)} / {ms(typed)} ({ms(service)})",
            numbers=(voice * 1000, typed * 1000, service * 1000),
            command=command("voice"),
        ),
        Row(
            key="voice",
            figure=f"13. Voice turn, {scene}: time our side adds to the turn (download, "
            "upload, transcript shown), the service's time taken out, median",
            value=ms(measured.ours),
            numbers=(measured.ours * 1000,),
            command=command("voice"),
            details=(f"{config.file_repeats} turns of each kind",),
        ),
    ]


async def run(config: Config, workdir: Path) -> list[Row]:
    """Measure what transcribing a voice note adds to a turn, on our side."""
    return rows(config, await measure(config, workdir))
