"""Load run: many chats at once against the fakes; every answer must come once and in order.

Run it with `python -m tests.load` (defaults: 1,000 messages from 100 chats); it prints its figures.
"""

import argparse
import asyncio
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.builders import sqlite_url
from tests.fakes.anthropic_server import FakeAnthropic, text
from tests.fakes.telegram_server import FakeTelegram
from tests.process import BotProcess, bot_environment

FIRST_CHAT = 50_000


@dataclass
class LoadResult:
    """What a load run measured."""

    chats: int
    messages: int
    answered: int
    wall_seconds: float
    wrong_chats: list[int]
    log_problems: list[str]
    rss_kib: list[int]

    @property
    def ok(self) -> bool:
        """Tell whether every message was answered once, in order, with a clean log."""
        return self.answered == self.messages and not self.wrong_chats and not self.log_problems


def rss_kib(pid: int) -> int:
    """Return a process's resident set size in KiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+)", status)
    assert match is not None, f"no VmRSS line in /proc/{pid}/status"
    return int(match.group(1))


def echo(request: dict):
    """Answer with the newest user text, without its time line."""
    newest = request["messages"][-1]["content"][-1]["text"]
    return text("echo: " + newest.split("\n", 1)[1])


async def run_load(
    chats: int = 100,
    per_chat: int = 10,
    model_latency: float = 0.2,
    telegram_latency: float = 0.01,
    database_url: str | None = None,
    timeout: float = 600,  # noqa: ASYNC109
) -> LoadResult:
    """Send per_chat messages from each of chats chats through a real bot process."""
    chat_ids = list(range(FIRST_CHAT, FIRST_CHAT + chats))
    total = chats * per_chat
    with tempfile.TemporaryDirectory() as workdir:
        url = database_url or sqlite_url(Path(workdir) / "load.db")
        async with (
            FakeTelegram(latency=telegram_latency) as tg,
            FakeAnthropic(latency=model_latency) as model,
        ):
            model.default = echo
            env = bot_environment(
                tg, model, url, ALLOWED_USER_IDS=",".join(map(str, chat_ids)), LOG_LEVEL="INFO"
            )
            bot = await BotProcess(env, Path(workdir)).start()
            samples: list[int] = []
            try:
                await tg.wait_for_call("getUpdates", timeout=120)
                started = time.perf_counter()
                for n in range(per_chat):
                    for chat_id in chat_ids:
                        tg.push_message(chat_id, f"message {n} from {chat_id}")
                await tg.wait_for_messages(count=total // 2, timeout=timeout)
                samples.append(rss_kib(bot.process.pid))
                await tg.wait_for_messages(count=total, timeout=timeout)
                wall = time.perf_counter() - started
                samples.append(rss_kib(bot.process.pid))
            finally:
                # A graceful stop ends every turn first: anything answered twice is in by then.
                await bot.stop()
            wrong = [
                chat_id
                for chat_id in chat_ids
                if tg.messages_to(chat_id)
                != [f"echo: message {n} from {chat_id}" for n in range(per_chat)]
            ]
            problems = [
                line
                for line in bot.output.splitlines()
                if " ERROR " in line or " CRITICAL " in line or "Traceback" in line
            ]
            return LoadResult(chats, total, len(tg.sent), wall, wrong, problems, samples)


def main() -> None:
    """Run the load and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chats", type=int, default=100)
    parser.add_argument("--per-chat", type=int, default=10)
    parser.add_argument("--model-latency", type=float, default=0.2)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    result = asyncio.run(
        run_load(args.chats, args.per_chat, args.model_latency, database_url=args.database_url)
    )
    print(f"messages sent            {result.messages} from {result.chats} chats")
    print(f"replies delivered        {result.answered}")
    print(f"chats out of order/dup   {len(result.wrong_chats)}")
    print(f"errors in the log        {len(result.log_problems)}")
    print(f"wall time                {result.wall_seconds:.1f} s")
    half, end = (kib / 1024 for kib in result.rss_kib)
    print(f"RSS at half / at end     {half:.1f} / {end:.1f} MiB")
    print("PASS" if result.ok else "FAIL")
    for line in result.log_problems[:20]:
        print("  ", line)


if __name__ == "__main__":
    main()
