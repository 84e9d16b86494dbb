"""`python -m bot` as a real process: migrates, answers, stops cleanly on SIGTERM."""

import os
import socket

from sqlalchemy import create_engine, inspect

from bot.migrations import upgrade_database_async
from tests.builders import sqlite_url
from tests.fakes.anthropic_server import text
from tests.harness import OWNER
from tests.process import ROOT, BotProcess, bot_environment, run_to_exit


async def test_python_m_bot_runs_migrations_answers_and_exits_on_sigterm(fakes, tmp_path):
    tg, model = fakes
    database = tmp_path / "data" / "bot.db"
    env = bot_environment(tg, model, sqlite_url(database))
    # A new interpreter, as a host starts it: the other process tests fork an imported one.
    bot = await BotProcess(env, tmp_path, fresh=True).start()
    try:
        model.script(text("Hello from the *process*"))
        tg.push_message(OWNER, "hi")
        [reply] = await tg.wait_for_messages(OWNER, timeout=60)
        assert reply["result"]["text"] == "Hello from the process"
    finally:
        code = await bot.stop()
    assert code == 0, bot.output
    assert tg.token not in bot.output and model.api_key not in bot.output
    assert "started as" in bot.output
    # Held off while it imported (bot/__main__.py), back on once it was up.
    assert "full collections on" in bot.output
    tables = inspect(create_engine(f"sqlite:///{database}")).get_table_names()
    assert "agent_memories" in tables and "alembic_version" in tables


async def test_missing_settings_stop_start_up_with_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "TELEGRAM"))}
    env["PYTHONPATH"] = str(ROOT)
    code, _, stderr = await run_to_exit(env, tmp_path)
    assert code == 2
    lines = stderr.strip().splitlines()
    assert lines == [
        "Invalid settings: TELEGRAM_BOT_TOKEN is not set: create a bot with @BotFather and "
        "paste its token; ANTHROPIC_API_KEY is not set: create a key at console.anthropic.com "
        "and paste it"
    ]


def _closed_port() -> int:
    """Return a localhost port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _start_up_failure(fakes, tmp_path, **extra: str) -> tuple[int, str, str]:
    """Start `python -m bot` at the default log level on a migrated database until it exits."""
    url = sqlite_url(tmp_path / "bot.db")
    await upgrade_database_async(url)
    tg, model = fakes
    env = bot_environment(tg, model, url, LOG_LEVEL="INFO", **extra)
    return await run_to_exit(env, tmp_path)


def _assert_one_line(stderr: str, stdout: str, expected: str, secret: str) -> None:
    """Check that the process said exactly one error line, and nothing else."""
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].endswith(expected), stderr
    assert stdout == "" and "Traceback" not in stderr and secret not in stderr


async def test_an_unreachable_telegram_stops_start_up_with_one_line(fakes, tmp_path):
    code, stdout, stderr = await _start_up_failure(
        fakes, tmp_path, TELEGRAM_API_BASE_URL=f"http://127.0.0.1:{_closed_port()}/bot"
    )
    assert code == 1
    _assert_one_line(
        stderr,
        stdout,
        " ERROR bot: could not reach Telegram: httpx.ConnectError: All connection attempts failed",
        fakes[0].token,
    )


async def test_a_token_telegram_refuses_stops_start_up_with_one_line(fakes, tmp_path):
    code, stdout, stderr = await _start_up_failure(
        fakes, tmp_path, TELEGRAM_BOT_TOKEN="987654:REFUSED-TOKEN"
    )
    assert code == 1
    _assert_one_line(
        stderr,
        stdout,
        " ERROR bot: Telegram refused to start the bot: "
        "The token `[REDACTED]` was rejected by the server.",
        "987654:REFUSED-TOKEN",
    )


async def test_a_failed_poll_after_start_up_is_still_logged_in_full(fakes, tmp_path):
    tg, model = fakes
    tg.fail_next("getUpdates", status=502, description="Bad Gateway")
    env = bot_environment(tg, model, sqlite_url(tmp_path / "bot.db"))
    bot = await BotProcess(env, tmp_path).start()
    try:
        model.script(text("Still here"))
        tg.push_message(OWNER, "hi")
        [reply] = await tg.wait_for_messages(OWNER, timeout=60)
        assert reply["result"]["text"] == "Still here"
    finally:
        code = await bot.stop()
    assert code == 0, bot.output
    # The application's error handler logs it, traceback and all.
    assert "Traceback" in bot.output and "telegram.error.NetworkError: Bad Gateway" in bot.output


async def test_another_poller_is_one_line_with_back_off_not_a_traceback_per_poll(fakes, tmp_path):
    tg, model = fakes
    # What Telegram answers every poll while a second process polls the same bot.
    tg.fail_next(
        "getUpdates",
        status=409,
        description="Conflict: terminated by other getUpdates request; make sure that only one "
        "bot instance is running",
        times=4,
    )
    env = bot_environment(tg, model, sqlite_url(tmp_path / "bot.db"))
    bot = await BotProcess(env, tmp_path).start()
    try:
        model.script(text("Back to work"))
        tg.push_message(OWNER, "hi")
        # PTB backs off (1 s, 1.5 s, 2.25 s, ...) before the poll that succeeds.
        [reply] = await tg.wait_for_messages(OWNER, timeout=60)
        assert reply["result"]["text"] == "Back to work"
    finally:
        code = await bot.stop()
    assert code == 0, bot.output
    assert bot.output.count("another instance is polling this bot") == 1, bot.output
    assert "Traceback" not in bot.output and "Conflict" in bot.output
