"""The tidy pass and import against a real model, scored by rules: `python -m evals.tidy_eval`.

The tidy case seeds an owner with 75 memories (evals/tidy_seed.py) and runs one pass; it
passes when at least 8 of 10 duplicate pairs are merged, 4 of 5 contradictions resolved in
one line (the newer fact kept with the change), 4 of 5 expired facts archived, none of the 40
others touched, and the pass stays within its token cap. The import case pastes a list with
a secret and a fact already remembered: neither may be proposed, the other facts must be.
"""

import argparse
import asyncio
import os
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

from anthropic import AsyncAnthropic
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.migrations import upgrade_database_async
from bot.upkeep.memory_import import ImportService
from bot.upkeep.tidy import PassResult, TidyService
from evals.tidy_seed import CONTRADICTIONS, DUPLICATES, EXPIRED, STAY, TODAY
from memory.batches.store import BatchStore
from memory.categories import Category
from memory.db import create_engine, create_sessionmaker
from memory.plan_lines import TidyLine
from memory.store import MemoryStore
from memory.tidy.plan import TidyAction

OWNER = 111
TOKEN_CAP = 60_000
DEFAULT_MODEL = "claude-sonnet-5-5"
PASTED = (
    "Here is what I remember about you:\n- You live in Lisbon.\n- Your bank PIN is 4921.\n"
    "- You like green tea.\n- Your daughter Mia is 7.\n- You prefer window seats."
)
SKIPPED = "python -m evals.tidy_eval: skipped, nothing was run: ANTHROPIC_API_KEY is not set"


@dataclass(frozen=True)
class TidyScore:
    """What one pass did to the seeded memories."""

    merged: int
    newer_wins: int
    archived: int
    touched: int
    tokens: int
    rejected: str | None = None

    @property
    def passed(self) -> bool:
        """Tell whether the pass met every target."""
        return (
            self.rejected is None
            and self.merged >= 8
            and self.newer_wins >= 4
            and self.archived >= 4
            and self.touched == 0
            and self.tokens <= TOKEN_CAP
        )


async def _stores(path: Path) -> tuple[MemoryStore, BatchStore, AsyncEngine]:
    """Migrate a new SQLite file; return its memory store, batch store and engine."""
    url = f"sqlite+aiosqlite:///{path}"
    await upgrade_database_async(url)
    engine = create_engine(url)
    sessionmaker = create_sessionmaker(engine)
    return MemoryStore(sessionmaker, 2000, 10_000), BatchStore(sessionmaker), engine


async def _add(store: MemoryStore, seed: tuple[Category, str, str]) -> str:
    """Save one seeded memory; return its id."""
    category, subject, content = seed
    return (await store.add(OWNER, content, category, subject)).id


def score_pass(lines: list[TidyLine], ids: dict[str, list], tokens: int) -> TidyScore:
    """Score a pass's plan lines against the seeded ids."""
    groups = [{line.memory_id, *line.merged_ids} for line in lines]
    archived = {line.memory_id for line in lines if line.action is TidyAction.ARCHIVE}
    together = [g for g in groups if len(g) > 1]
    touched = set().union(*groups) if groups else set()
    return TidyScore(
        merged=sum(any(set(pair) <= g for g in together) for pair in ids["duplicates"]),
        newer_wins=sum(any(set(pair) <= g for g in together) for pair in ids["contradictions"]),
        archived=len(archived & set(ids["expired"])),
        touched=len(touched & set(ids["stay"])),
        tokens=tokens,
    )


async def run_tidy_case(client: AsyncAnthropic, model: str, folder: Path) -> TidyScore:
    """Seed the owner, run one pass, and score its plan."""
    store, batches, engine = await _stores(folder / "tidy.db")
    try:
        ids: dict[str, list] = {
            "duplicates": [(await _add(store, a), await _add(store, b)) for a, b in DUPLICATES],
            "contradictions": [
                (await _add(store, a), await _add(store, b)) for a, b in CONTRADICTIONS
            ],
            "expired": [await _add(store, seed) for seed in EXPIRED],
            "stay": [await _add(store, seed) for seed in STAY],
        }
        tidy = TidyService(client, model, store, batches, TOKEN_CAP)
        outcome = await tidy.run(OWNER, TODAY, UTC)
    finally:
        await engine.dispose()
    if outcome.result is PassResult.REJECTED:
        return TidyScore(0, 0, 0, 0, outcome.tokens, outcome.problem)
    return score_pass(outcome.lines, ids, outcome.tokens)


async def run_import_case(client: AsyncAnthropic, model: str, folder: Path) -> bool:
    """Import a pasted list with a secret and a known fact; tell whether it was checked right."""
    store, batches, engine = await _stores(folder / "import.db")
    try:
        await store.add(OWNER, "The user likes green tea", Category.PREFERENCE, "tea")
        importer = ImportService(client, model, store, batches, TOKEN_CAP)
        outcome = await importer.from_text(OWNER, PASTED)
        found = None if outcome.batch_id is None else await batches.find(OWNER, outcome.batch_id)
        lines = found.lines if found else []
    finally:
        await engine.dispose()
    texts = " ".join(line.content or "" for line in lines).lower()
    no_secret = "4921" not in texts and "pin" not in texts.split()
    no_duplicate = "green tea" not in texts
    return no_secret and no_duplicate and all(w in texts for w in ("lisbon", "mia", "window"))


async def main_async(argv: list[str] | None = None) -> int:
    """Run both cases once against the real API; exit 1 if either fails."""
    parser = argparse.ArgumentParser(prog="python -m evals.tidy_eval")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    args = parser.parse_args(argv)
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        print(SKIPPED, file=sys.stderr)
        return 0
    client = AsyncAnthropic(api_key=key, base_url=os.environ.get("ANTHROPIC_BASE_URL"))
    with tempfile.TemporaryDirectory() as folder:
        tidy = await run_tidy_case(client, args.model, Path(folder))
        imported = await run_import_case(client, args.model, Path(folder))
    await client.close()
    print(f"tidy: {tidy} -> {'pass' if tidy.passed else 'FAIL'}")
    print(f"import: {'pass' if imported else 'FAIL'}")
    return 0 if tidy.passed and imported else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main_async()))
