"""Figure 15: what a web turn costs against a turn without the web, with the cache emulated.

One private conversation (the cache benchmark's memories): a few plain turns, then the same
kind of question answered three ways, each the next turn: without the web tools offered
(WEB_TOOLS=off, a second bot on the same database is not needed: a second conversation is),
with them offered but unused, and with one search (two results) and a cited answer. The fake
bills the results as the API does, as input of the call that searched, and a search at $10 per
1,000. Tokens are the fake's estimates (a quarter of the JSON, encrypted results included),
so the ratios say more than the absolute figures.
"""

from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import Reply, text
from tests.fakes.anthropic_web import cited, search_result, web_search
from tests.harness import FRIEND, OWNER, make_settings
from tests.perf.botrun import PerfBot, database
from tests.perf.common import Config, Row, command
from tests.perf.data import model_reply, user_message
from tests.perf.fakes import TimedAnthropic, TimedTelegram
from tests.perf.seeding import seed_memories

# Sonnet's list prices per million tokens (evals/prices.py): input, cache write, read, output.
PRICES = (3.0, 3.75, 0.30, 15.0)
SEARCH_PRICE = 10.0 / 1000
WARM_TURNS = 3
RESULTS = [
    search_result("Main Street Pharmacy: opening hours", "https://mainst-pharmacy.example/hours"),
    search_result("Late pharmacies in town", "https://city.example.org/pharmacies"),
]


def dollars(usage: dict[str, Any]) -> float:
    """Return a call's cost: its tokens at Sonnet's prices, plus its searches."""
    tokens = (
        usage["input_tokens"], usage["cache_creation_input_tokens"],
        usage["cache_read_input_tokens"], usage["output_tokens"],
    )  # fmt: skip
    searches = (usage.get("server_tool_use") or {}).get("web_search_requests", 0)
    return sum(n * p for n, p in zip(tokens, PRICES, strict=True)) / 1e6 + searches * SEARCH_PRICE


def describe(name: str, usage: dict[str, Any]) -> str:
    """Return one turn's tokens and cost as a line of details."""
    searches = (usage.get("server_tool_use") or {}).get("web_search_requests", 0)
    return (
        f"{name}: in {usage['input_tokens']} write {usage['cache_creation_input_tokens']} "
        f"read {usage['cache_read_input_tokens']} out {usage['output_tokens']} "
        f"searches {searches}: ${dollars(usage):.4f}"
    )


async def _turns(bot: PerfBot, model: TimedAnthropic, chat: int, last: Reply) -> dict[str, Any]:
    """Hold the warm-up turns in a chat, then the last one; return the last call's usage."""
    for turn in range(1, WARM_TURNS + 1):
        model.script(text(model_reply(turn)))
        await bot.exchange(chat, user_message(turn))
    model.script(last)
    await bot.exchange(chat, "What time does the pharmacy on Main Street close today?")
    return model.usages[-1]


async def run(config: Config, workdir: Path) -> list[Row]:
    """Price a plain turn, one with the web tools offered, and a searched one."""
    answer = "It closes at 9 pm today."
    async with (
        database("sqlite", workdir, config.postgres_url) as url,
        TimedTelegram() as tg,
        TimedAnthropic(cache_emulation=True) as model,
    ):
        for chat in (OWNER, FRIEND):
            await seed_memories(url, chat, config.cache_memories)
        usages: dict[str, dict[str, Any]] = {}
        for web_tools in (False, True):
            bot = PerfBot(tg, model, make_settings(tg, model, url, web_tools=web_tools))
            await bot.start()
            try:
                if not web_tools:
                    usages["no web tools"] = await _turns(bot, model, FRIEND, text(answer))
                    continue
                usages["web tools, unused"] = await _turns(bot, model, OWNER, text(answer))
                search = Reply([*web_search("Main Street pharmacy hours", RESULTS),
                                cited(answer, RESULTS[0])])  # fmt: skip
                model.script(search)
                await bot.exchange(OWNER, "And the one on Station Road, is it open late?")
                usages["one search"] = model.usages[-1]
                model.script(text("You're welcome."))
                await bot.exchange(OWNER, "Thanks!")
                usages["the turn after"] = model.usages[-1]
            finally:
                await bot.stop()
    plain, searched = dollars(usages["no web tools"]), dollars(usages["one search"])
    scene = f"{config.cache_memories} memories, {WARM_TURNS} turns before"
    return [
        Row(
            key="web",
            figure=f"15. Web turn vs. a turn without the web ({scene}): cost, one search",
            value=f"${searched:.4f} vs ${plain:.4f} ({searched / plain:.1f}x)",
            numbers=(searched, plain),
            command=command("web", f"--cache-memories {config.cache_memories}"),
            details=tuple(describe(name, usage) for name, usage in usages.items()),
        )
    ]
