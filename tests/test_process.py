"""`python -m bot` as a real process: migrates, answers, stops cleanly on SIGTERM."""

import asyncio
import os
import sys

from sqlalchemy import create_engine, inspect

from tests.fakes.anthropic_server import text
from tests.harness import OWNER
from tests.process import ROOT, BotProcess, bot_environment


async def test_python_m_bot_runs_migrations_answers_and_exits_on_sigterm(fakes, tmp_path):
    tg, model = fakes
    database = tmp_path / "data" / "bot.db"
    env = bot_environment(tg, model, f"sqlite+aiosqlite:///{database}")
    bot = await BotProcess(env, tmp_path).start()
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
        "Invalid settings: TELEGRAM_BOT_TOKEN is not set: create a bot with @BotFather and "
        "paste its token; ANTHROPIC_API_KEY is not set: create a key at console.anthropic.com "
        "and paste it"
    ]
