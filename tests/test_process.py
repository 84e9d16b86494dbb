"""`python -m bot` as a real process: migrates, answers, stops cleanly on SIGTERM."""

import asyncio
import os
import signal
import sys
from pathlib import Path

from sqlalchemy import create_engine, inspect

from tests.fakes.anthropic_server import text
from tests.harness import OWNER

ROOT = Path(__file__).resolve().parent.parent


async def test_python_m_bot_runs_migrations_answers_and_exits_on_sigterm(fakes, tmp_path):
    tg, model = fakes
    database = tmp_path / "data" / "bot.db"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "TELEGRAM"))},
        "TELEGRAM_BOT_TOKEN": tg.token,
        "ANTHROPIC_API_KEY": model.api_key,
        "ALLOWED_USER_IDS": str(OWNER),
        "DATABASE_URL": f"sqlite+aiosqlite:///{database}",
        "TELEGRAM_API_BASE_URL": tg.base_url,
        "ANTHROPIC_BASE_URL": model.base_url,
        "LOG_LEVEL": "DEBUG",
        "PYTHONPATH": str(ROOT),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        model.script(text("Hello from the *process*"))
        tg.push_message(OWNER, "hi")
        [reply] = await tg.wait_for_messages(OWNER, timeout=60)
        assert reply["result"]["text"] == "Hello from the process"
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = await asyncio.wait_for(process.communicate(), timeout=30)
    log = output.decode()
    assert process.returncode == 0, log
    assert tg.token not in log and model.api_key not in log
    assert "getUpdates" in log or "started as" in log
    tables = inspect(create_engine(f"sqlite:///{database}")).get_table_names()
    assert "agent_memories" in tables and "alembic_version" in tables


async def test_missing_settings_stop_start_up_with_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "TELEGRAM"))}
    env["PYTHONPATH"] = str(ROOT)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 2
    lines = stderr.decode().strip().splitlines()
    assert lines == [
        "Invalid settings: TELEGRAM_BOT_TOKEN is not set; ANTHROPIC_API_KEY is not set"
    ]
