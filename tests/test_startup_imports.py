"""Start-up loads no library the first voice note or PDF can load instead."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Build the Application as python -m bot does (voice notes configured), then name what loaded.
BUILD = """
import sys
from bot.app import build_application
from bot.settings import load_settings

build_application(load_settings())
print(*sorted(name for name in ("openai", "pypdf") if name in sys.modules))
"""


def test_building_the_application_loads_neither_openai_nor_pypdf(tmp_path):
    environment = {
        **os.environ,
        "TELEGRAM_BOT_TOKEN": "123:abc",
        "ANTHROPIC_API_KEY": "sk-ant-x",
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}",
        "FILE_CACHE_DIR": str(tmp_path / "files"),
        "TRANSCRIPTION_BASE_URL": "http://127.0.0.1:9/v1",
        "TRANSCRIPTION_API_KEY": "sk-voice",
        "TRANSCRIPTION_MODEL": "whisper-1",
    }
    built = subprocess.run(
        [sys.executable, "-c", BUILD],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    assert built.stdout.split() == []
