"""Figure 3: how much of each request Anthropic's prompt cache would serve, and what it costs."""

import copy
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import PromptCache, text, tool_use
from tests.harness import OWNER, make_settings
from tests.perf.botrun import PerfBot, database
from tests.perf.common import Config, Row, command
from tests.perf.data import model_reply, user_message
from tests.perf.fakes import TimedAnthropic, TimedTelegram
from tests.perf.seeding import seed_memories

READ_SHARE_TARGET = 0.90
COST_TARGET = 0.20
WRITE_PRICE = 1.25
READ_PRICE = 0.10
# Turns on which the model saves something, so tool rounds are part of the conversation.
TOOL_TURNS = {
    5: {
        "content": "The user's sister Priya moves to Berlin in May.",
        "category": "person",
        "subject": "Priya",
    },
    12: {
        "content": "The user prefers tea over coffee after 3pm.",
        "category": "preference",
        "subject": "tea",
    },
}


def without_cache_control(value: Any) -> Any:
    """Return a copy of a request with every cache_control marker removed."""
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return copy.copy(value)


def cost(usage: dict[str, Any]) -> float:
    """Return a request's input cost in base-price tokens."""
    return (
        usage["input_tokens"]
        + WRITE_PRICE * usage["cache_creation_input_tokens"]
        + READ_PRICE * usage["cache_read_input_tokens"]
    )


def total_input(usage: dict[str, Any]) -> int:
    """Return all input tokens of a request, however billed."""
    return (
        usage["input_tokens"]
        + usage["cache_creation_input_tokens"]
        + usage["cache_read_input_tokens"]
    )


async def run(config: Config, workdir: Path) -> list[Row]:
    """Hold one conversation with cache emulation on, then price it with and without caching."""
    turn_of: list[int] = []
    async with (
        database("sqlite", workdir, config.postgres_url) as url,
        TimedTelegram() as tg,
        TimedAnthropic(cache_emulation=True) as model,
    ):
        await seed_memories(url, OWNER, config.cache_memories)
        bot = PerfBot(tg, model, make_settings(tg, model, url))
        await bot.start()
        try:
            for turn in range(1, config.cache_turns + 1):
                if turn in TOOL_TURNS:
                    model.script(tool_use("add_to_memory", TOOL_TURNS[turn]))
                model.script(text(model_reply(turn)))
                before = len(model.usages)
                await bot.exchange(OWNER, user_message(turn))
                turn_of += [turn] * (len(model.usages) - before)
        finally:
            await bot.stop()
        requests, usages = model.requests, model.usages
    assert len(requests) == len(usages) == len(turn_of), "every request must be answered"
    later = [u for u, turn in zip(usages, turn_of, strict=True) if turn >= 2]
    read_share = sum(u["cache_read_input_tokens"] for u in later) / max(
        1, sum(total_input(u) for u in later)
    )
    # The same requests without markers, through a fresh cache: everything is uncached.
    plain = PromptCache()
    baseline = sum(plain.account(without_cache_control(r)).input_tokens for r in requests)
    ratio = sum(cost(u) for u in usages) / max(1, baseline)
    scene = f"{config.cache_turns}-turn conversation, {config.cache_memories} memories"
    options = f"--cache-turns {config.cache_turns} --cache-memories {config.cache_memories}"
    per_turn = [
        f"turn {turn:2}: in {u['input_tokens']:5} read {u['cache_read_input_tokens']:6} "
        f"write {u['cache_creation_input_tokens']:5}"
        for u, turn in zip(usages, turn_of, strict=True)
    ]
    return [
        Row(
            key="cache",
            figure=f"3. Prompt cache, {scene}: input tokens read from cache, turns 2..",
            value=f"{read_share:.1%}",
            numbers=(read_share * 100,),
            target=f">= {READ_SHARE_TARGET:.0%}",
            met=read_share >= READ_SHARE_TARGET,
            command=command("cache", options),
            details=tuple(per_turn),
        ),
        Row(
            key="cache",
            figure=(
                f"3. Prompt cache, {scene}: input cost vs. no cache_control "
                f"(writes {WRITE_PRICE:g}x, reads {READ_PRICE:g}x)"
            ),
            value=f"{ratio:.3f}",
            numbers=(ratio,),
            target=f"<= {COST_TARGET:g}",
            met=ratio <= COST_TARGET,
            command=command("cache", options),
            details=(
                f"{len(requests)} requests, {baseline} input tokens without caching, "
                f"{sum(cost(u) for u in usages):.0f} base-price tokens with it",
            ),
        ),
    ]
