"""Figure 1: the bot's own time per message, on both sides of the model call."""

import statistics
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from tests.harness import OWNER, make_settings
from tests.perf.botrun import Pacer, PerfBot, database
from tests.perf.common import Config, Row, command, ms, percentile
from tests.perf.data import user_message
from tests.perf.floor import build_floor_application
from tests.perf.remote import RemoteFakes
from tests.perf.seeding import seed_memories

P50_TARGET = 0.005
P99_TARGET = 0.020
RATIO_TARGET = 1.5
TARGET_MEMORIES = 1000
TARGET_BACKEND = "sqlite"
BACKEND_NAMES = {"sqlite": "SQLite", "postgres": "Postgres"}


@dataclass
class Samples:
    """Per-message overheads in seconds, split by side and by conversation start."""

    inbound: list[float] = field(default_factory=list)  # update out -> model request in
    outbound: list[float] = field(default_factory=list)  # model answer out -> sendMessage in
    first_turn: list[bool] = field(default_factory=list)
    cpu: float = 0.0  # the bot process's CPU seconds per measured message

    @property
    def total(self) -> list[float]:
        """Return the overhead of each message: both sides added."""
        return [a + b for a, b in zip(self.inbound, self.outbound, strict=True)]

    def extend(self, more: "Samples") -> None:
        """Add another round's messages; the CPU per message becomes that of all of them."""
        count = len(self.inbound)
        added = len(more.inbound)
        if count + added:
            self.cpu = (self.cpu * count + more.cpu * added) / (count + added)
        self.inbound += more.inbound
        self.outbound += more.outbound
        self.first_turn += more.first_turn


async def measure(
    config: Config,
    workdir: Path,
    fakes: RemoteFakes,
    backend: str,
    memories: int,
    *,
    floor: bool = False,
    streamed: bool = True,
) -> Samples:
    """Chat with the bot one message at a time and split each turn's time around the model."""
    samples = Samples()
    kinds: list[tuple[bool, bool] | None] = []  # per update: (measured, first turn) or a /new
    async with database(backend, workdir, config.postgres_url) as url:
        await seed_memories(url, OWNER, memories)
        tg, model = await fakes.reset()
        factory = build_floor_application if floor else None
        settings = make_settings(tg, model, url, stream_replies=streamed)
        bot = PerfBot(tg, model, settings, factory=factory)
        await bot.start()
        try:
            pacer = Pacer(config.pace)

            async def say(text: str) -> None:
                await pacer.wait()
                await fakes.push([(OWNER, text)])
                await fakes.wait([OWNER], len(kinds))
                await bot.settle()

            for i in range(config.warmup + config.messages):
                if i == config.warmup:
                    cpu = time.process_time()
                first = i % config.turns_per_conversation == 0 and not floor
                if first and i:
                    kinds.append(None)
                    await say("/new")
                kinds.append((i >= config.warmup, first))
                await say(user_message(i))
            samples.cpu = (time.process_time() - cpu) / config.messages
            state = await fakes.state()
        finally:
            await bot.stop()
    handed_out = [when for _, when in state["update_out"]]
    delivered = [when for chat, when in state["sends"] if chat == OWNER]
    model_calls = iter(state["timings"])
    for kind, out, sent in zip(kinds, handed_out, delivered, strict=True):
        if kind is None:
            continue
        arrived, answered = next(model_calls)
        measured, first = kind
        if measured:
            samples.inbound.append(arrived - out)
            samples.outbound.append(sent - answered)
            samples.first_turn.append(first)
    return samples


def rows(backend: str, memories: int, samples: Samples) -> list[Row]:
    """Return the p50/p99 row for one database and memory count."""
    total = samples.total
    p50, p99 = percentile(total, 50), percentile(total, 99)
    starts = [t for t, first in zip(total, samples.first_turn, strict=True) if first]
    later = [t for t, first in zip(total, samples.first_turn, strict=True) if not first]
    has_target = backend == TARGET_BACKEND and memories == TARGET_MEMORIES
    return [
        Row(
            key="overhead",
            figure=(
                f"1. Bot overhead per message, p50 / p99: {BACKEND_NAMES[backend]}, "
                f"{memories:,} memories"
            ),
            value=f"{ms(p50)} / {ms(p99)}",
            numbers=(p50 * 1000, p99 * 1000),
            target="< 5 ms / < 20 ms" if has_target else "",
            met=(p50 < P50_TARGET and p99 < P99_TARGET) if has_target else None,
            command=command("overhead", f"--backends {backend}", f"--memories {memories}"),
            details=(
                f"{len(total)} messages; update->model p50 {ms(percentile(samples.inbound, 50))}"
                f" p99 {ms(percentile(samples.inbound, 99))}; model->sendMessage p50 "
                f"{ms(percentile(samples.outbound, 50))} p99 "
                f"{ms(percentile(samples.outbound, 99))}; bot process CPU per message "
                f"{ms(samples.cpu)}",
                f"first turn of a conversation ({len(starts)}) p50 {ms(percentile(starts, 50))}"
                f" max {ms(max(starts, default=float('nan')))}; later turns p50 "
                f"{ms(percentile(later, 50))} p99 {ms(percentile(later, 99))}",
            ),
        )
    ]


def reference_row(samples: Samples, streamed: bool) -> Row:
    """Return the p50/p99 row of a relay with none of our code."""
    total = samples.total
    how = "messages.stream" if streamed else "messages.create"
    return Row(
        key="overhead",
        figure=(
            "1. Reference: PTB + anthropic SDK alone (no code of ours), p50 / p99"
            + (", streamed (messages.stream)" if streamed else "")
        ),
        value=f"{ms(percentile(total, 50))} / {ms(percentile(total, 99))}",
        numbers=(percentile(total, 50) * 1000, percentile(total, 99) * 1000),
        command=command("overhead"),
        details=(
            f"{len(total)} messages through {how}; update->model p50 "
            f"{ms(percentile(samples.inbound, 50))}; model->sendMessage p50 "
            f"{ms(percentile(samples.outbound, 50))}; bot process CPU per message "
            f"{ms(samples.cpu)}",
        ),
    )


def ratio_row(
    p50s: list[float], cpus: list[float], reference: Samples, streamed_reference: Samples
) -> Row:
    """Return the bot rows' median p50 over the streamed reference's (the bot streams too).

    Both references are measured in the same run, so a busy machine slows them alike; the
    details add the CPU time per message, which a busy machine disturbs less.
    """
    bot = statistics.median(p50s)
    ratio = bot / percentile(reference.total, 50)
    streamed = bot / percentile(streamed_reference.total, 50)
    cpu = statistics.median(cpus)
    return Row(
        key="overhead",
        figure="1. Bot overhead over the reference, p50 (median of the rows above), streamed",
        value=f"{streamed:.2f}x the streamed reference ({ratio:.2f}x the messages.create one)",
        numbers=(ratio, streamed),
        target=f"<= {RATIO_TARGET:g}x",
        met=streamed <= RATIO_TARGET,
        command=command("overhead"),
        details=(
            f"bot p50 {ms(bot)}, each row: {', '.join(ms(p) for p in p50s)}",
            f"CPU per message: bot {ms(cpu)}, streamed reference {ms(streamed_reference.cpu)} "
            f"({cpu / streamed_reference.cpu:.2f}x), messages.create reference "
            f"{ms(reference.cpu)}",
        ),
    )


async def run(config: Config, workdir: Path, fakes: RemoteFakes) -> list[Row]:
    """Measure every database and memory count the config asks for, and the references.

    They take turns (config.overhead_rounds), each turn a share of the messages.
    """
    rounds = max(1, config.overhead_rounds)
    share = replace(config, messages=max(1, config.messages // rounds))
    floor, floor_streamed = Samples(), Samples()
    cases = [(backend, memories) for backend in config.backends for memories in config.memories]
    bots = {case: Samples() for case in cases}
    for _ in range(rounds):
        floor.extend(await measure(share, workdir, fakes, "sqlite", 0, floor=True, streamed=False))
        floor_streamed.extend(await measure(share, workdir, fakes, "sqlite", 0, floor=True))
        for backend, memories in cases:
            bots[backend, memories].extend(await measure(share, workdir, fakes, backend, memories))
    result: list[Row] = []
    for (backend, memories), samples in bots.items():
        result += rows(backend, memories, samples)
    p50s = [percentile(samples.total, 50) for samples in bots.values()]
    cpus = [samples.cpu for samples in bots.values()]
    result += [reference_row(floor, streamed=False), reference_row(floor_streamed, streamed=True)]
    result.append(ratio_row(p50s, cpus, floor, floor_streamed))
    return result
