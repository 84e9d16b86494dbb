"""Figure 11: how soon a reply shows when the model streams it, and how often its draft changes."""

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.harness import OWNER, make_settings
from tests.perf.botrun import PerfBot, database
from tests.perf.common import Config, Row, command
from tests.perf.data import long_reply, user_message
from tests.perf.remote import RemoteFakes

FIRST_TEXT_TARGET = 1.5
DRAFT_RATE_TARGET = 2.0


@dataclass
class Replies:
    """Per reply, seconds from the update leaving getUpdates to what the user saw."""

    first_text: list[float] = field(default_factory=list)  # the first draft, else the reply
    final: list[float] = field(default_factory=list)  # the reply's last message
    drafts: list[int] = field(default_factory=list)  # drafts shown
    draft_rates: list[float] = field(default_factory=list)  # drafts a second while streaming
    closest: list[float] = field(default_factory=list)  # the two closest drafts, apart
    after_model: list[float] = field(default_factory=list)  # model's answer done to last message


def collect(state: dict, replies: int) -> Replies:
    """Split the recorded times into replies: each runs from its update to its last message."""
    found = Replies()
    outs = [when for _, when in state["update_out"]]
    sends = sorted(when for chat, when in state["sends"] if chat == OWNER)
    drafts = sorted(when for chat, when in state["drafts"] if chat == OWNER)
    answered = [done for _, done in state["timings"]]
    for i, out in enumerate(outs[:replies]):
        end = outs[i + 1] if i + 1 < len(outs) else float("inf")
        last = max(when for when in sends if out <= when < end)
        shown = [when for when in drafts if out <= when < last]
        found.first_text.append((shown[0] if shown else min(s for s in sends if s >= out)) - out)
        found.final.append(last - out)
        found.after_model.append(last - answered[i])
        found.drafts.append(len(shown))
        if len(shown) > 1:
            found.draft_rates.append(len(shown) / (last - shown[0]))
            found.closest.append(min(b - a for a, b in itertools.pairwise(shown)))
    return found


async def measure(config: Config, workdir: Path, fakes: RemoteFakes, *, streamed: bool) -> Replies:
    """Ask for config.stream_runs paced replies one after another; time what the user sees."""
    reply = long_reply(config.stream_tokens)
    async with database("sqlite", workdir, config.postgres_url) as url:
        tg, model = await fakes.reset(
            reply=reply, first_delay=config.stream_first_delay, duration=config.stream_duration
        )
        bot = PerfBot(tg, model, make_settings(tg, model, url, stream_replies=streamed))
        await bot.start()
        try:
            timeout = config.stream_first_delay + config.stream_duration + 30
            for i in range(config.stream_runs):
                await fakes.push([(OWNER, user_message(i))])
                await fakes.wait([OWNER], i + 1, timeout)
                await bot.settle()
            state = await fakes.state()
        finally:
            await bot.stop()
    return collect(state, config.stream_runs)


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


async def run(config: Config, workdir: Path, fakes: RemoteFakes) -> list[Row]:
    """Time a streamed reply in a private chat with streaming on, then off."""
    streamed = await measure(config, workdir, fakes, streamed=True)
    plain = await measure(config, workdir, fakes, streamed=False)
    scene = (
        f"11. Streamed reply of ~{config.stream_tokens} tokens (first after "
        f"{config.stream_first_delay:g} s, the rest over {config.stream_duration:g} s)"
    )
    options = command(
        "streaming", f"--stream-first-delay {config.stream_first_delay:g}",
        f"--stream-duration {config.stream_duration:g}",
    )  # fmt: skip
    first, rate = max(streamed.first_text), max(streamed.draft_rates, default=float("nan"))
    runs = f"median of {config.stream_runs}" if config.stream_runs > 1 else "one reply"
    return [
        Row(
            key="streaming",
            figure=f"{scene}: update to first visible text, streamed (a draft), worst",
            value=f"{first:.2f} s",
            numbers=(first,),
            target=f"<= {FIRST_TEXT_TARGET:g} s",
            met=first <= FIRST_TEXT_TARGET,
            command=options,
            details=(f"each reply: {', '.join(f'{t:.3f} s' for t in streamed.first_text)}",),
        ),
        Row(
            key="streaming",
            figure=f"{scene}: update to first visible text, STREAM_REPLIES=false (the reply)",
            value=f"{_median(plain.first_text):.2f} s",
            numbers=(_median(plain.first_text),),
            command=options,
            details=(f"{runs}",),
        ),
        Row(
            key="streaming",
            figure=f"{scene}: update to the final message, streamed / not streamed",
            value=f"{_median(streamed.final):.2f} s / {_median(plain.final):.2f} s",
            numbers=(_median(streamed.final), _median(plain.final)),
            command=options,
            details=(
                f"{runs}; from the model's last byte to the final message "
                f"{_median(streamed.after_model) * 1000:.1f} ms / "
                f"{_median(plain.after_model) * 1000:.1f} ms; no drafts without streaming: "
                f"{sum(plain.drafts) == 0}",
            ),
        ),
        Row(
            key="streaming",
            figure=f"{scene}: drafts per reply, most a second",
            value=f"{_median(streamed.drafts):g} drafts, {rate:.2f} a second",
            numbers=(_median(streamed.drafts), rate),
            target=f"<= {DRAFT_RATE_TARGET:g} a second",
            met=rate <= DRAFT_RATE_TARGET,
            command=options,
            details=(f"closest two drafts {min(streamed.closest, default=0):.3f} s apart",),
        ),
    ]
