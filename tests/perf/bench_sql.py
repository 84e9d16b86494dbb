"""Figure 5: how many SQL statements one chat turn issues, by memories and history length."""

from pathlib import Path

from sqlalchemy import event

from tests.fakes.anthropic_server import text, tool_use
from tests.harness import OWNER, make_settings
from tests.perf.botrun import PerfBot, database
from tests.perf.common import Config, Row, command
from tests.perf.data import model_reply, user_message
from tests.perf.fakes import TimedAnthropic, TimedTelegram
from tests.perf.seeding import seed_memories

# The issue asks for a constant: the same count whatever the memories and the history.
TARGET = "same at every size"
SAVE = {
    "content": "The user prefers tea over coffee after 3pm.",
    "category": "preference",
    "subject": "tea",
}


async def count(
    config: Config, workdir: Path, backend: str, memories: int
) -> tuple[dict[int, list[str]], list[str]]:
    """Return the statements of the turns at each history length, and of a tool turn."""
    at: dict[int, list[str]] = {}
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append(" ".join(statement.split()))

    async with (
        database(backend, workdir, config.postgres_url) as url,
        TimedTelegram() as tg,
        TimedAnthropic() as model,
    ):
        await seed_memories(url, OWNER, memories)
        model.default = lambda body: text(model_reply(len(model.requests)))
        # Room for the save: at the default cap, 10,000 memories would have it refused.
        settings = make_settings(tg, model, url, memory_max_items=memories + 100)
        bot = PerfBot(tg, model, settings)
        await bot.start()
        engine = bot.services.engine.sync_engine
        event.listen(engine, "before_cursor_execute", record)
        try:
            # One conversation first, so one-off work after start-up is not counted.
            await bot.exchange(OWNER, "hello")
            await bot.exchange(OWNER, "/new")
            for turn in range(1, max(config.sql_history) + 1):
                statements.clear()
                await bot.exchange(OWNER, user_message(turn))
                if turn in config.sql_history:
                    at[turn] = list(statements)
            model.script(tool_use("add_to_memory", SAVE), text("Saved."))
            statements.clear()
            await bot.exchange(OWNER, "Remember that I prefer tea after 3pm.")
            tool_turn = list(statements)
        finally:
            event.remove(engine, "before_cursor_execute", record)
            await bot.stop()
    return at, tool_turn


def _grid(counts: dict[tuple[int, int], int], history: list[int]) -> str:
    """Describe counts by memories for the given history lengths."""
    sizes = sorted({m for m, _ in counts})
    return "; ".join(
        f"{m:,} memories: " + ", ".join(f"h{h}={counts[m, h]}" for h in history) for m in sizes
    )


async def run(config: Config, workdir: Path, backend: str = "sqlite") -> list[Row]:
    """Count statements per turn at every memory count and history length."""
    counts: dict[tuple[int, int], int] = {}
    tool_counts: dict[int, int] = {}
    tool_samples: dict[int, list[str]] = {}
    samples: dict[int, list[str]] = {}
    for memories in config.sql_memories:
        at, tool_turn = await count(config, workdir, backend, memories)
        for history, statements in at.items():
            counts[memories, history] = len(statements)
            samples.setdefault(history, statements)
        tool_counts[memories] = len(tool_turn)
        tool_samples[memories] = tool_turn
    first = min(config.sql_history)
    later = [h for h in config.sql_history if h != first]
    starts = {counts[m, first] for m in config.sql_memories}
    continuing = {counts[m, h] for m in config.sql_memories for h in later}
    sizes = "/".join(f"{m:,}" for m in config.sql_memories)
    options = (
        f"--sql-memories {','.join(map(str, config.sql_memories))} "
        f"--sql-history {','.join(map(str, config.sql_history))}"
    )
    rows = [
        Row(
            key="sql",
            figure=f"5. SQL statements, turn that starts a conversation ({sizes} memories)",
            value=" or ".join(map(str, sorted(starts))),
            numbers=tuple(sorted(starts)),
            target=TARGET,
            met=len(starts) == 1,
            command=command("sql", options),
            details=(_grid(counts, [first]), *samples[first]),
        )
    ]
    if later:
        rows.append(
            Row(
                key="sql",
                figure=(
                    f"5. SQL statements, later turn (history {', '.join(map(str, later))}; "
                    f"{sizes} memories)"
                ),
                value=" or ".join(map(str, sorted(continuing))),
                numbers=tuple(sorted(continuing)),
                target=TARGET,
                met=len(continuing) == 1,
                command=command("sql", options),
                details=(_grid(counts, later), *samples[later[-1]]),
            )
        )
    rows.append(
        Row(
            key="sql",
            figure="5. SQL statements, later turn with one add_to_memory call",
            value=" or ".join(map(str, sorted(set(tool_counts.values())))),
            numbers=tuple(sorted(set(tool_counts.values()))),
            command=command("sql", options),
            details=(
                "; ".join(f"{m:,} memories: {n}" for m, n in tool_counts.items()),
                *tool_samples[max(tool_samples)],
            ),
        )
    )
    return rows
