"""Figure 7: what a photo adds to a turn: request bytes, input tokens, and the bot's time.

Two private chats with the same memories hold the same two turns, a question and a
follow-up; in one, the question comes as the caption of a photo. The differences are what
the photo adds. Prompt caching is emulated (FakeAnthropic(cache_emulation=True)).
"""

from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from tests.fakes.anthropic_server import PromptCache, text
from tests.fakes.media import sample_jpeg
from tests.harness import FRIEND, OWNER, make_settings
from tests.perf.botrun import PerfBot, database
from tests.perf.common import Config, Row, command, ms
from tests.perf.fakes import TimedAnthropic, TimedTelegram
from tests.perf.seeding import seed_memories

# Telegram's largest photo size, and a typical size of its JPEG for a phone photo.
PHOTO_SIDES = (2560, 1920)
PHOTO_BYTES = 600_000
QUESTION = "What's the total on this receipt?"
FOLLOW_UP = "And how much of that was tax?"
KINDS = ("text", "text+", "photo", "photo+")  # "+": the follow-up
MEDIA = ("image", "document")


@dataclass
class Turn:
    """One measured turn: its request's size and usage, and the bot's time before it."""

    body_bytes: int
    usage: dict[str, Any]
    wait: float  # update handed out -> model request fully read
    file_tokens: int  # what the request's images and documents count for


def file_tokens(body: dict[str, Any]) -> int:
    """Return the input tokens a request's files add: all of it less the same without them."""
    plain = {
        **body,
        "messages": [
            {**m, "content": [b for b in m["content"] if b.get("type") not in MEDIA]}
            for m in body["messages"]
        ],
    }
    return PromptCache().account(body).total - PromptCache().account(plain).total


@dataclass
class Measured:
    """The measured turns by kind, in the order they were held."""

    turns: dict[str, list[Turn]] = field(default_factory=lambda: {k: [] for k in KINDS})

    def median(self, kind: str, value: str) -> float:
        """Return the median of one value over the kind's turns."""
        return median(getattr(turn, value) for turn in self.turns[kind])


async def _turn(bot: PerfBot, chat_id: int, words: str, photo: bytes | None = None) -> Turn:
    """Send a message (or a photo with a caption), wait for the reply, and measure its turn."""
    tg, model = bot.tg, bot.model
    model.script(text("The total is 42.50 EUR, paid by card on 3 March."))
    before, index = len(tg.sends_to(chat_id)), len(model.timings)
    if photo is None:
        update = tg.push_message(chat_id, words)
    else:
        update = tg.push_photo(chat_id, photo, caption=words)
    await tg.wait_for_sends([chat_id], before + 1)
    await bot.settle()
    wait = model.timings[index][0] - tg.update_out[update["update_id"]]
    body = model.requests[index]
    return Turn(model.body_sizes[index], model.usages[index], wait, file_tokens(body))


async def _new_conversation(bot: PerfBot, chat_id: int) -> None:
    before = len(bot.tg.sends_to(chat_id))
    bot.tg.push_message(chat_id, "/new")
    await bot.tg.wait_for_sends([chat_id], before + 1)
    await bot.settle()


async def measure(config: Config, workdir: Path) -> Measured:
    """Hold both conversations `file_repeats` times, each after /new."""
    photo = sample_jpeg(*PHOTO_SIDES, pad_to=PHOTO_BYTES)
    measured = Measured()
    async with (
        database("sqlite", workdir, config.postgres_url) as url,
        TimedTelegram() as tg,
        TimedAnthropic(cache_emulation=True) as model,
    ):
        for owner in (OWNER, FRIEND):
            await seed_memories(url, owner, config.cache_memories)
        bot = PerfBot(tg, model, make_settings(tg, model, url, file_cache_dir=workdir / "files"))
        await bot.start()
        try:
            for _ in range(config.file_repeats):
                for chat_id, kind, image in ((OWNER, "text", None), (FRIEND, "photo", photo)):
                    measured.turns[kind].append(await _turn(bot, chat_id, QUESTION, image))
                    measured.turns[kind + "+"].append(await _turn(bot, chat_id, FOLLOW_UP))
                    await _new_conversation(bot, chat_id)
        finally:
            await bot.stop()
    return measured


def rows(config: Config, measured: Measured) -> list[Row]:
    """Lay out the photo's cost in bytes, tokens and time against the same turns in text."""
    kb = {k: measured.median(k, "body_bytes") / 1000 for k in KINDS}
    wait = {k: measured.median(k, "wait") for k in KINDS}
    first = {k: measured.turns[k][0].usage for k in KINDS}  # the first conversation of each
    added = measured.turns["photo"][0].file_tokens
    read = {k: first[k]["cache_read_input_tokens"] for k in ("photo+", "text+")}
    rest = {k: first[k]["input_tokens"] + first[k]["cache_creation_input_tokens"] for k in read}
    scene = f"photo {PHOTO_SIDES[0]}x{PHOTO_SIDES[1]} JPEG of {PHOTO_BYTES / 1000:.0f} kB"
    options = command("files", f"--cache-memories {config.cache_memories}")
    return [
        Row(
            key="files",
            figure=f"10. Image turn, {scene}: request size, first turn / cached follow-up "
            "(the same turns in text)",
            value=f"{kb['photo']:.0f} kB / {kb['photo+']:.0f} kB "
            f"({kb['text']:.1f} / {kb['text+']:.1f} kB)",
            numbers=tuple(kb[k] for k in ("photo", "photo+", "text", "text+")),
            command=options,
        ),
        Row(
            key="files",
            figure=f"10. Image turn, {scene}: input tokens the photo adds; on the follow-up, "
            "tokens read from cache / not read from cache (the same turns in text)",
            value=f"+{added:,}; {read['photo+']:,} / {rest['photo+']:,} "
            f"({read['text+']:,} / {rest['text+']:,})",
            numbers=(added, read["photo+"], rest["photo+"], read["text+"], rest["text+"]),
            command=options,
            details=tuple(f"{k}: {first[k]}" for k in KINDS),
        ),
        Row(
            key="files",
            figure=f"10. Image turn, {scene}: bot time from update to model request, photo / "
            "follow-up (in text: question / follow-up), median",
            value=f"{ms(wait['photo'])} / {ms(wait['photo+'])} "
            f"({ms(wait['text'])} / {ms(wait['text+'])})",
            numbers=tuple(wait[k] * 1000 for k in ("photo", "photo+", "text", "text+")),
            command=options,
            details=(f"{config.file_repeats} conversations of each kind",),
        ),
    ]


async def run(config: Config, workdir: Path) -> list[Row]:
    """Measure what a photo adds to a turn and its follow-up."""
    return rows(config, await measure(config, workdir))
