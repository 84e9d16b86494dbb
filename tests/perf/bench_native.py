"""Figure 18: a press of Telegram's Stop to the model's stream closed; a table's first draft.

The fakes run in the bot's own process here (the stop's path is the bot's event loop and the
fake model's server noticing the closed connection), so a loaded machine slows both sides.
"""

import statistics
import time
from pathlib import Path

from tests.fakes.anthropic_server import FakeAnthropic, paced
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import OWNER, BotHarness, make_settings
from tests.perf.botrun import database
from tests.perf.common import Config, Row, command, percentile

CLOSE_TARGET = 0.3  # seconds, p99
FIRST_DELAY = 1.0  # the model's first text, as in figure 11
FIRST_TEXT_TARGET = 1.5  # figure 11's target
TABLE = "| Sentence | Words |\n| --- | --- |\n" + "\n".join(
    f"| number {i} | {i * 7} |" for i in range(60)
)
STORY = " ".join(f"Sentence {i} of a story that goes on for a while." for i in range(200))
WAIT = 30.0


async def _draft(tg: FakeTelegram, after: int) -> dict:
    """Wait for the first draft after the `after`-th one was accepted; return it."""
    if not await tg._wait_until(lambda: len(tg.drafts) > after, WAIT):
        raise AssertionError("no draft came")
    return tg.drafts[after]


async def _stops(bot: BotHarness, presses: int) -> list[float]:
    """Press Stop on long answers; return each press's seconds to the stream closed."""
    tg, model = bot.tg, bot.model
    seconds = []
    for i in range(presses):
        model.script(paced(STORY, first_delay=0.1, duration=30.0))
        tg.push_message(OWNER, f"story {i}")
        await _draft(tg, len(tg.drafts))
        closed = len(model.closed_early)
        tg.press_stop(OWNER)
        await model.wait_for_close(closed + 1, WAIT)
        await bot.idle(WAIT)
        seconds.append(model.closed_early[closed]["at"] - tg.stops[-1]["at"])
    return seconds


async def _first_text(bot: BotHarness, runs: int) -> list[float]:
    """Ask for table replies; return seconds from each message pushed to its first draft."""
    tg, model = bot.tg, bot.model
    seconds = []
    for i in range(runs):
        model.script(paced(TABLE, first_delay=FIRST_DELAY, duration=1.0))
        before = len(tg.drafts)
        pushed = time.monotonic()
        tg.push_message(OWNER, f"a table {i}")
        draft = await _draft(tg, before)
        seconds.append(draft["at"] - pushed)
        await bot.idle(WAIT)
    return seconds


async def _bot_run(config: Config, workdir: Path, rich: bool) -> tuple[list[float], list[float]]:
    """Start a bot on the fakes; return its Stop timings (rich on only) and first drafts."""
    async with (
        FakeTelegram() as tg,
        FakeAnthropic() as model,
        database("sqlite", workdir, config.postgres_url) as url,
    ):
        settings = make_settings(tg, model, url, rich_messages=rich)
        bot = await BotHarness(tg, model, settings).start()
        try:
            closes = await _stops(bot, config.stop_presses) if rich else []
            first = await _first_text(bot, config.rich_runs)
            kinds = {name for name, _ in tg.calls if name.endswith("Draft")}
            assert kinds == (
                {"sendRichMessageDraft", "sendMessageDraft"} if rich else {"sendMessageDraft"}
            )
        finally:
            await bot.stop()
    return closes, first


async def run(config: Config, workdir: Path) -> list[Row]:
    """Time presses of Stop to the model's stream closed, and a table's first draft."""
    closes, rich = await _bot_run(config, workdir, rich=True)
    _, plain = await _bot_run(config, workdir, rich=False)
    p50, p99 = percentile(closes, 50), percentile(closes, 99)
    scene = f"18. A table reply (first text after {FIRST_DELAY:g} s): message to first draft"
    return [
        Row(
            key="native",
            figure=f"18. Press of Stop to the model's stream closed, {len(closes)} presses",
            value=f"p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms",
            numbers=(p50, p99),
            target=f"p99 < {CLOSE_TARGET * 1000:.0f} ms",
            met=p99 < CLOSE_TARGET,
            command=command("native"),
            details=(f"each: {', '.join(f'{s * 1000:.0f}' for s in closes)} ms",),
        ),
        Row(
            key="native",
            figure=f"{scene}, rich draft / HTML draft (RICH_MESSAGES=off), worst",
            value=f"{max(rich):.2f} s / {max(plain):.2f} s",
            numbers=(max(rich), max(plain)),
            target=f"<= {FIRST_TEXT_TARGET:g} s",
            met=max(rich) <= FIRST_TEXT_TARGET,
            command=command("native"),
            details=(
                f"medians {statistics.median(rich):.3f} s / {statistics.median(plain):.3f} s",
            ),
        ),
    ]
