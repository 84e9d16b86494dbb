"""Figure 2: many chats at once, with a slow model, with and without concurrency."""

from pathlib import Path

from tests.harness import OWNER, make_settings
from tests.perf.botrun import PerfBot, database
from tests.perf.common import Config, Row, command
from tests.perf.data import user_message
from tests.perf.floor import build_floor_application
from tests.perf.remote import RemoteFakes

WALL_TARGET = 3.0
FIRST_CHAT = 20_000


async def wall_time(
    config: Config,
    workdir: Path,
    fakes: RemoteFakes,
    *,
    concurrent: bool,
    rate_limited: bool,
    floor: bool = False,
) -> tuple[float, int]:
    """Send one message from each chat at once; return the time to the last reply, overlap."""
    chats = list(range(FIRST_CHAT, FIRST_CHAT + config.chats))
    async with database("sqlite", workdir, config.postgres_url) as url:
        tg, model = await fakes.reset(reply="Sure, here is the short answer you asked for.")
        # The reference relays with messages.create, as before replies were streamed.
        settings = make_settings(
            tg, model, url, allowed_user_ids=frozenset({OWNER, *chats}), stream_replies=not floor
        )
        bot = PerfBot(
            tg,
            model,
            settings,
            concurrent=concurrent,
            rate_limited=rate_limited,
            factory=build_floor_application if floor else None,
        )
        await bot.start()
        try:
            # One turn first, so imports and connections are not part of the figure.
            await fakes.push([(OWNER, "hello")])
            await fakes.wait([OWNER], 1)
            await bot.settle()
            await fakes.set_latency(config.model_latency)
            await fakes.push([(chat, user_message(chat)) for chat in chats])
            timeout = config.chats * (config.model_latency + 1) + 60
            await fakes.wait(chats, config.chats, timeout)
            state = await fakes.state()
            await bot.settle()
        finally:
            await bot.stop()
    crowd = set(chats)
    end = max(when for chat, when in state["sends"] if chat in crowd)
    return end - state["pushed_at"][-1], state["max_in_flight"]


async def run(config: Config, workdir: Path, fakes: RemoteFakes) -> list[Row]:
    """Measure the shipped Application, then without the rate limiter, then without concurrency."""
    shipped, overlap = await wall_time(config, workdir, fakes, concurrent=True, rate_limited=True)
    unlimited, _ = await wall_time(config, workdir, fakes, concurrent=True, rate_limited=False)
    sequential, _ = await wall_time(config, workdir, fakes, concurrent=False, rate_limited=True)
    floor, _ = await wall_time(
        config, workdir, fakes, concurrent=True, rate_limited=False, floor=True
    )
    scene = f"{config.chats} chats at once, model answers in {config.model_latency:g} s"
    options = f"--chats {config.chats} --model-latency {config.model_latency:g}"
    target = f"< {WALL_TARGET:g} s"
    return [
        Row(
            key="concurrency",
            figure=f"2. {scene}: all replies delivered, as shipped (30 messages a second)",
            value=f"{shipped:.2f} s",
            numbers=(shipped,),
            target=target,
            met=shipped < WALL_TARGET,
            command=command("concurrency", options),
            details=(f"{overlap} model calls in flight at once",),
        ),
        Row(
            key="concurrency",
            figure=f"2. {scene}: same, without the rate limiter",
            value=f"{unlimited:.2f} s",
            numbers=(unlimited,),
            target=target,
            met=unlimited < WALL_TARGET,
            command=command("concurrency", options),
        ),
        Row(
            key="concurrency",
            figure=f"2. {scene}: concurrency off, as the ratio off / on",
            value=f"{sequential / shipped:.1f}x ({sequential:.1f} s)",
            numbers=(sequential / shipped, sequential),
            command=command("concurrency", options),
        ),
        Row(
            key="concurrency",
            figure=f"2. Reference: {scene}, PTB + anthropic SDK alone, without a rate limiter",
            value=f"{floor:.2f} s",
            numbers=(floor,),
            command=command("concurrency", options),
        ),
    ]
