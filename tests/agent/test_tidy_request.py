"""A tidy pass's request stays within its token cap, however many memories there are."""

import json
from datetime import UTC, date, datetime

from bot.upkeep.tidy_request import PLAN_TOOL, plan_request
from memory.categories import Category
from memory.items import MemoryItem
from memory.tokens import count_tokens

AT = datetime(2026, 11, 1, tzinfo=UTC)


def items(count: int) -> list[MemoryItem]:
    """Return count different memories."""
    return [
        MemoryItem(f"m{n:07d}", 1, Category.CONTEXT, f"topic {n}",
                   f"The user noted fact number {n} about the garden", 1, AT, AT)
        for n in range(count)
    ]  # fmt: skip


def request_tokens(request: dict) -> int:
    """Count a request's tokens as the pass does (cl100k), answer included."""
    sent = request["system"] + request["messages"][0]["content"] + json.dumps(request["tools"])
    return count_tokens(sent) + request["max_tokens"]


def test_a_pass_sends_what_fits_its_cap_and_forces_the_plan_tool():
    request, covered = plan_request("m", items(1000), date(2026, 11, 26), 8000, 20)
    assert 0 < covered < 1000 and request_tokens(request) <= 8000
    assert request["tool_choice"] == {"type": "tool", "name": PLAN_TOOL}
    assert request["messages"][0]["content"].count("\n") == covered
    assert "At most 20 changes" in request["system"]
    everything, covered = plan_request("m", items(50), date(2026, 11, 26), 60_000, 20)
    assert covered == 50 and request_tokens(everything) <= 60_000
