"""Figure 20: scaling out, 1, 2 and 4 web processes on one Postgres behind a round-robin proxy.

Each chat's user sends a message, waits for the answer, and sends the next, through
Telegram's webhook delivery (tests/fakes/telegram_webhook.py) and the proxy (tests/scale.py).
The fake model thinks 0.2 to 2 s times scale_think, the same for the same request. Reported:
messages answered a second (all chats together, first post to last reply) and the p99 reply
overhead (post to reply, less the model's think time for that request). Each size runs
scale_runs times; the table gives the median run by throughput. Postgres only.
"""

import asyncio
import time
from dataclasses import replace
from pathlib import Path

from tests.fakes.anthropic_server import text
from tests.fakes.telegram_webhook import WebhookDelivery
from tests.perf.botrun import database, postgres_available
from tests.perf.common import Config, Row, command, median, ms, percentile
from tests.perf.fakes import TimedAnthropic, TimedTelegram
from tests.scale import Cluster, answer_to, chat_texts, echo_words, think_range

FIRST_CHAT = 800_000


def settings(chats: list[int]) -> dict[str, str]:
    """Return the processes' settings: the default lease, no streaming, INFO logs."""
    return {
        "LOG_LEVEL": "INFO",
        "STREAM_REPLIES": "off",
        "ALLOWED_USER_IDS": ",".join(map(str, chats)),
    }


async def user(telegram: WebhookDelivery, tg: TimedTelegram, chat: int, messages: int) -> None:
    """Send a chat's messages, each after the answer to the one before."""
    for n, words in enumerate(chat_texts(chat, messages)):
        await telegram.send_chat(chat, [words])
        await tg.wait_for_sends([chat], n + 1, timeout=300)


async def one_run(config: Config, workdir: Path, processes: int) -> tuple[float, float, int]:
    """Run every chat through processes web processes; return msgs/s, p99 overhead, count."""
    chats = [FIRST_CHAT + n for n in range(config.scale_chats)]
    async with (
        TimedTelegram() as tg,
        TimedAnthropic() as model,
        database("postgres", workdir, config.postgres_url) as url,
    ):
        model.default = lambda body: text(answer_to(echo_words(body)))
        model.thinking = think_range(config.scale_think)
        cluster = Cluster((tg, model), url, workdir, processes, settings(chats))
        address = await cluster.start()
        try:
            await tg.wait_for_call("setWebhook", count=processes, timeout=120)
            secret = tg.webhook["secret_token"] if tg.webhook else ""
            async with WebhookDelivery(address, secret) as telegram:
                started = time.perf_counter()
                await asyncio.gather(*(user(telegram, tg, c, config.scale_messages) for c in chats))
                elapsed = time.perf_counter() - started
        finally:
            await cluster.stop()
        thought = {answer_to(echo_words(b)): model.think_time(b) for b in model.requests}
        overheads = []
        for chat in chats:
            sent = tg.sends_to(chat)
            for words, at in zip(chat_texts(chat, config.scale_messages), sent, strict=True):
                posted = telegram.sent_at[(chat, words)]
                overheads.append(at - posted - thought[answer_to(words)])
    total = len(chats) * config.scale_messages
    return total / elapsed, percentile(overheads, 99), total


async def run(config: Config, workdir: Path) -> list[Row]:
    """Measure throughput and reply overhead per number of processes (Postgres only)."""
    if "postgres" not in config.backends or not await postgres_available(config.postgres_url):
        return []
    rows = []
    for processes in config.scale_processes:
        runs = [await one_run(config, workdir, processes) for _ in range(config.scale_runs)]
        by_rate = sorted(runs)
        rate, p99, total = by_rate[len(by_rate) // 2]
        details = tuple(f"run: {r:.1f} msg/s, p99 overhead {ms(p)}" for r, p, _ in runs)
        rows.append(
            Row(
                key="scale",
                figure=f"20. Scale-out, {processes} web process(es): msg/s, p99 reply overhead",
                value=f"{rate:.1f} msg/s, {ms(p99)} ({total} messages)",
                numbers=(rate, p99, median([r for r, _, _ in runs])),
                command=command("scale", "--scale-processes", str(processes)),
                details=details,
            )
        )
    return rows


def tiny(config: Config) -> Config:
    """Return the sizes the smoke test runs: one and two processes, a few messages."""
    return replace(
        config,
        backends=("postgres",),
        scale_processes=(1, 2),
        scale_chats=3,
        scale_messages=2,
        scale_runs=1,
    )
