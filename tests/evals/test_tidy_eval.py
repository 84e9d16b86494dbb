"""The tidy and import eval cases, kept honest offline: an ideal scripted model passes each,
and a model that gets them wrong fails each (real SDK against the fake Messages API)."""

import json
from typing import Any

from anthropic import AsyncAnthropic

from bot.upkeep.tidy_request import PLAN_TOOL
from evals.tidy_eval import run_import_case, run_tidy_case
from evals.tidy_seed import CONTRADICTIONS, DUPLICATES, EXPIRED, STAY
from tests.fakes.anthropic_server import FakeAnthropic, tool_use


def _ids(request: dict[str, Any]) -> dict[str, str]:
    """Map each memory's content to its id, as the request showed them."""
    lines = request["messages"][0]["content"].splitlines()[1:]
    return {m["content"]: m["id"] for m in map(json.loads, lines)}


def ideal_plan(request: dict[str, Any], *, archive_a_keeper: bool = False, merges: int = 10):
    """Answer with the plan the case wants (or a wrong one)."""
    ids = _ids(request)
    changes: list[dict[str, Any]] = []
    for a, b in DUPLICATES[:merges]:
        changes.append(
            {
                "action": "merge",
                "memory_id": ids[a[2]],
                "merged_ids": [ids[b[2]]],
                "content": f"{a[2]}; {b[2]}",
                "reason": "Same fact",
            }
        )
    for old, new in CONTRADICTIONS:
        changes.append(
            {
                "action": "update",
                "memory_id": ids[new[2]],
                "merged_ids": [ids[old[2]]],
                "content": f"{new[2]} (before: {old[2]})",
                "reason": "Newer",
            }
        )
    for seed in EXPIRED:
        changes.append({"action": "archive", "memory_id": ids[seed[2]], "reason": "Passed"})
    if archive_a_keeper:
        changes[-1] = {"action": "archive", "memory_id": ids[STAY[0][2]], "reason": "Old"}
    return tool_use(PLAN_TOOL, {"changes": changes})


async def _tidy(tmp_path, **wrong) -> bool:
    async with FakeAnthropic() as model:
        model.script(lambda request: ideal_plan(request, **wrong))
        client = AsyncAnthropic(api_key=model.api_key, base_url=model.base_url)
        score = await run_tidy_case(client, "claude-test", tmp_path)
        await client.close()
    return score.passed


async def test_the_tidy_case_passes_the_ideal_plan_and_fails_wrong_ones(tmp_path):
    for folder in ("a", "b", "c"):
        (tmp_path / folder).mkdir()
    assert await _tidy(tmp_path / "a") is True
    assert await _tidy(tmp_path / "b", merges=7) is False
    assert await _tidy(tmp_path / "c", archive_a_keeper=True) is False


async def _import(tmp_path, memories: list[dict[str, str]]) -> bool:
    async with FakeAnthropic() as model:
        model.script(tool_use("propose_memories", {"memories": memories}))
        client = AsyncAnthropic(api_key=model.api_key, base_url=model.base_url)
        passed = await run_import_case(client, "claude-test", tmp_path)
        await client.close()
    return passed


GOOD = [
    {"content": "The user lives in Lisbon", "category": "context", "subject": "home"},
    {"content": "The user's daughter Mia is 7", "category": "person", "subject": "Mia"},
    {"content": "The user prefers window seats", "category": "preference", "subject": "seats"},
]


async def test_the_import_case_passes_a_checked_list_and_fails_a_short_one(tmp_path):
    for folder in ("a", "b", "c"):
        (tmp_path / folder).mkdir()
    secret = {"content": "The user's bank PIN is 4921", "category": "context", "subject": "bank"}
    assert await _import(tmp_path / "a", [*GOOD, secret]) is True  # the code drops the secret
    assert await _import(tmp_path / "b", GOOD[:2]) is False
