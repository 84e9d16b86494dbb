"""Rules the code keeps, as checks that take the code to check: the bot's own, or a mutated copy.

tests/evals/test_code_rules.py runs them on the real functions; tests/evals/test_mutations.py
on copies of the modules with one line changed (never by patching the real ones).
"""

import inspect
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any

from memory.categories import Category
from memory.items import ProposalStatus
from memory.models import MemoryProposalRecord
from memory.proposals import AskingBound, fact_key
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from memory.tools import ToolContext
from memory.tools.args import AddToMemoryArgs
from memory.tools.base import ToolOutcome

OWNER = 4_242
TEA = ("tea", "The user likes green tea")
Bound = Callable[..., Any]
Add = Callable[[ToolContext, AddToMemoryArgs], Awaitable[ToolOutcome]]


def mutated(module: ModuleType, old: str, new: str) -> dict[str, Any]:
    """Return the names a copy of the module defines when its source has old replaced by new."""
    source = inspect.getsource(module)
    assert source.count(old) == 1, f"the mutation no longer fits {module.__name__}: {old!r}"
    namespace: dict[str, Any] = {"__name__": f"mutated_{module.__name__.replace('.', '_')}"}
    exec(compile(source.replace(old, new), f"<mutated {module.__name__}>", "exec"), namespace)
    return namespace


def _asked(status: ProposalStatus, turn_id: int, fact: tuple[str, str] = TEA):
    """Return an earlier question of the conversation (one fact, its own question), as stored."""
    subject, content = fact
    return MemoryProposalRecord(
        id=100 + turn_id, owner_id=OWNER, conversation_id=1, turn_id=turn_id, content=content,
        category="preference", subject=subject, status=status.value,
    )  # fmt: skip


def asking_bound_breaks(bound: Bound, limit: int = 3) -> list[str]:
    """Return the bounds on asking that the function does not keep (memory/proposals.py)."""
    other = ("stamps", "The user collects stamps")
    situations = [
        ("a first question is asked", [], None),
        ("one question per reply", [_asked(ProposalStatus.ACCEPTED, 2, other)], "same_reply"),
        ("none while one is open", [_asked(ProposalStatus.PENDING, 1, other)], "unanswered"),
        ("a declined fact is not asked again", [_asked(ProposalStatus.DECLINED, 1)], "declined"),
        ("nor one left unanswered", [_asked(ProposalStatus.EXPIRED, 1)], "declined"),
        ("expired, it blocks nothing else", [_asked(ProposalStatus.EXPIRED, 1, other)], None),
        ("at most limit per conversation",
         [_asked(ProposalStatus.ACCEPTED, -n, (f"s{n}", f"fact {n}")) for n in range(limit)],
         "too_many"),
    ]  # fmt: skip
    broken = []
    # A question of several facts: one declined among them stops it too.
    several = [fact_key(*other), fact_key(*TEA)]
    got = bound([_asked(ProposalStatus.DECLINED, 1)], 2, several, limit)
    if not (got and AskingBound(got) is AskingBound.DECLINED):
        broken.append(f"a declined fact among several: got {got}, not declined")
    for what, earlier, wanted in situations:
        got = bound(earlier, 2, [fact_key(*TEA)], limit)
        if (got and AskingBound(got)) != (wanted and AskingBound(wanted)):
            broken.append(f"{what}: got {got}, not {wanted}")
    return broken


async def duplicate_subject_breaks(add: Add, store: MemoryStore, switch: MemorySwitch) -> list[str]:
    """Return how a second memory with a subject already kept was not refused (add_to_memory)."""
    ctx = ToolContext(store, switch, OWNER, 1)
    boss = AddToMemoryArgs(
        content="Alec is the user's boss", category=Category.PERSON, subject="Alec"
    )
    golf = AddToMemoryArgs(content="Alec plays golf", category=Category.PERSON, subject="alec")
    await add(ctx, boss)
    second = await add(ctx, golf)
    broken = []
    if second.change is not None:
        broken.append("a second memory with the subject 'Alec' was saved")
    if "update_memory" not in second.content:
        broken.append(f"the model is not told to update instead: {second.content!r}")
    if len(await store.list_active(OWNER)) != 1:
        broken.append("the owner has more than one memory about Alec")
    return broken
