"""Figure 7: an allowed user's reply while a stranger floods another chat, and without."""

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.harness import OWNER, STRANGER, make_settings
from tests.perf.botrun import PerfBot, database
from tests.perf.common import Config, Row, command, median, ms
from tests.perf.data import user_message
from tests.perf.remote import RemoteFakes

MARGIN_TARGET = 1.0
# Each round floods a group of its own, so each round's stranger is told once, as in life.
FIRST_GROUP = -100_700_000
STRANGER_IN_GROUP = {"user_id": STRANGER, "chat_type": "group", "first_name": "Eve"}


@dataclass
class Samples:
    """Reply times in seconds, from the push to the owner's sendMessage."""

    quiet: list[float] = field(default_factory=list)
    flooded: list[float] = field(default_factory=list)
    handled: list[float] = field(default_factory=list)  # push -> whole flood handled
    notices: int = 0  # messages the bot sent to the flooded groups, in all


async def reply_time(fakes: RemoteFakes, replies: int, messages: list[Any]) -> float:
    """Push messages, the owner's last; return the time to the owner's next reply."""
    await fakes.push(messages)
    await fakes.wait([OWNER], replies + 1, timeout=120)
    state = await fakes.state()
    reply = [when for chat, when in state["sends"] if chat == OWNER][replies]
    return reply - state["pushed_at"][-1]


async def measure(config: Config, workdir: Path, fakes: RemoteFakes) -> Samples:
    """Alternate rounds without and with a flood, as shipped; record the owner's reply times."""
    samples = Samples()
    groups = [FIRST_GROUP - n for n in range(config.flood_rounds)]
    async with database("sqlite", workdir, config.postgres_url) as url:
        tg, model = await fakes.reset(reply="Sure, here is the short answer you asked for.")
        bot = PerfBot(tg, model, make_settings(tg, model, url))
        await bot.start()
        try:
            # One turn first, so imports and connections are not part of the figure.
            await reply_time(fakes, 0, [(OWNER, "hello")])
            await bot.settle()
            for n, group in enumerate(groups):
                replies = 1 + 2 * n
                own = (OWNER, user_message(2 * n))
                samples.quiet.append(await reply_time(fakes, replies, [own]))
                await bot.settle()
                flood = [(group, "/start", STRANGER_IN_GROUP)] * config.flood_updates
                own = (OWNER, user_message(2 * n + 1))
                samples.flooded.append(await reply_time(fakes, replies + 1, [*flood, own]))
                await bot.settle(timeout=300)
                samples.handled.append(time.perf_counter() - (await fakes.state())["pushed_at"][-1])
            sends = (await fakes.state())["sends"]
            samples.notices = sum(1 for chat, _ in sends if chat in set(groups))
        finally:
            await bot.stop()
    return samples


async def run(config: Config, workdir: Path, fakes: RemoteFakes) -> list[Row]:
    """Measure the owner's reply time with and without a stranger's flood in another chat."""
    samples = await measure(config, workdir, fakes)
    flooded, quiet = median(samples.flooded), median(samples.quiet)
    updates = f"{config.flood_updates:,}"
    return [
        Row(
            key="flood",
            figure=(
                f"7. Allowed user's reply while a stranger floods {updates} updates in another "
                f"chat, with / without the flood (median of {config.flood_rounds})"
            ),
            value=f"{ms(flooded)} / {ms(quiet)}",
            numbers=(flooded, quiet),
            target=f"within {MARGIN_TARGET:g} s of the no-flood time",
            met=flooded - quiet <= MARGIN_TARGET,
            command=command("flood", f"--flood-updates {config.flood_updates}"),
            details=(
                f"with the flood, slowest of {len(samples.flooded)}: {ms(max(samples.flooded))}",
                f"each flood fully handled after (median) {median(samples.handled):.2f} s",
                f"messages sent to the flooded groups: {samples.notices} "
                f"in {config.flood_rounds} round(s), one per group expected",
            ),
        )
    ]
