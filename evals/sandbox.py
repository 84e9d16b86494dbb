"""A trial's world: a copy of a migrated SQLite database, settings, and the seeded memories."""

import asyncio
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

from bot.migrations import upgrade_database_async
from bot.settings import Settings
from evals.case import Case
from memory.store import MemoryStore

# Settings require a bot token; the evaluation never talks to Telegram.
NO_TELEGRAM = "unused-by-the-evaluation"


def sqlite_url(path: Path) -> str:
    """Return the database URL of a SQLite file."""
    return f"sqlite+aiosqlite:///{path}"


def _copy(source: Path, target: Path) -> None:
    """Copy a SQLite database with the online backup API (consistent, WAL or not)."""
    with closing(sqlite3.connect(source)) as original, closing(sqlite3.connect(target)) as copy:
        original.backup(copy)


class Databases:
    """A database migrated once per run with bot.migrations, copied fresh for each trial."""

    def __init__(self, directory: Path, template: Path | None = None):
        self._directory = directory
        self._migrated = template is not None
        self._template = template or directory / "template.db"

    async def prepare(self) -> None:
        """Migrate the template to head, unless it was given migrated."""
        if not self._migrated:
            await upgrade_database_async(sqlite_url(self._template))

    async def fresh(self, name: str) -> Path:
        """Return a new copy of the template, for one trial."""
        path = self._directory / f"{name}.db"
        await asyncio.to_thread(_copy, self._template, path)
        return path

    @staticmethod
    def discard(path: Path) -> None:
        """Delete a trial's database, SQLite's files beside it, and its files' cache."""
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        shutil.rmtree(files_dir(path), ignore_errors=True)


def files_dir(database: Path) -> Path:
    """Return where a trial's bot caches the files its user sent, beside its database."""
    return database.with_name(f"{database.stem}-files")


def _default(name: str):
    """Return a setting's default, so the maintainer's environment cannot change a case."""
    return Settings.model_fields[name].default


def trial_settings(
    case: Case, model: str, api_key: str, base_url: str | None, database: Path
) -> Settings:
    """Return the bot's settings for a trial of the case, ignoring .env and the environment."""
    return Settings(
        _env_file=None,
        telegram_bot_token=NO_TELEGRAM,
        anthropic_api_key=api_key,
        anthropic_base_url=base_url,
        anthropic_model=model,
        database_url=sqlite_url(database),
        timezone=str(case.now.tzinfo),
        history_token_budget=case.history_token_budget or _default("history_token_budget"),
        memory_token_budget=case.memory_token_budget or _default("memory_token_budget"),
        conversation_idle_minutes=_default("conversation_idle_minutes"),
        anthropic_max_tokens=_default("anthropic_max_tokens"),
        agent_max_tool_rounds=_default("agent_max_tool_rounds"),
        web_tools=case.web_tools,
        memory_max_items=case.memory_limit or _default("memory_max_items"),
        # The few pictures cases send, cached beside the trial's database and deleted with it.
        file_cache_dir=files_dir(database),
        file_cache_mb=16,
    )


async def seed_memories(store: MemoryStore, case: Case) -> dict[str, str]:
    """Save the case's memories, oldest first; return their ids by key."""
    ids = {}
    for seed in case.seeds:
        item = await store.add(case.owner_id, seed.content, seed.category, seed.subject)
        ids[seed.key] = item.id
    return ids
