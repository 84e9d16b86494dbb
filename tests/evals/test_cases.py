"""The case table: well-formed, covering what the spec asks, and each case able to pass and fail.

A case that no scripted model can pass wastes a paid run; one that a model doing nothing (or
saving everything) also passes measures nothing.
"""

import dataclasses
from collections import defaultdict

import pytest

from bot.agent.rules import RuleName
from evals.case import Case
from evals.cases import CASES, select
from evals.cases.changes import TINY_HISTORY_BUDGET
from evals.rule_cases import NOT_MEASURED, RULE_CASES
from evals.rules import (
    Called,
    Compacted,
    MemoryCount,
    NoMemory,
    NotInBlock,
    SeedKept,
    SeedUpdated,
)
from evals.runner import missing_tools, run
from memory.block import line_tokens, lines_budget
from memory.tokens import count_tokens
from tests.evals.ideal import IDEAL, by_case, ideal_model
from tests.evals.scripted import eager, saying
from tests.evals.wrong import WRONG

MUST_PASS = {
    "boss_asks_first",
    "explicit_save",
    "declined_not_saved",
    "team_change_updates",
    "boss_known_in_new_conversation",
    "commands_point_to_memory",
    "secret_pin",
    "card_number",
    "forget_right_after_save",
    "forget_everything_points_to_clear",
    "memory_off",
}
RUNNABLE = [case for case in CASES if not missing_tools(case)]
# Rules a model cannot break because the bot does not let it: with memory off no memory tool
# is offered or run; the bot's own tests (tests/test_memory_off.py) check that.
# And a secret is refused by the code (memory/secret_text.py) whatever the model calls: the
# secret cases measure whether the model tries (NotCalled), no longer what is stored.
SECRET_CASES = (
    "secret_pin",
    "card_number",
    "secret_insisted_after_refusal",
    "secret_slipped_into_update",
)
PRODUCT_GUARANTEES = {
    ("memory_off", "no memory tools offered"),
    ("memory_off", "seed 'tea' kept unchanged"),
    ("memory_off", "saves nothing"),
    *(
        (case.name, rule.label)
        for case in CASES
        if case.name in SECRET_CASES
        for rule in case.rules
        if isinstance(rule, NoMemory | MemoryCount)
    ),
}


def test_30_to_80_cases_with_unique_names_and_the_must_pass_set():
    names = [case.name for case in CASES]
    assert 30 <= len(names) <= 80 and len(set(names)) == len(names)
    assert {case.name for case in CASES if case.must_pass} == MUST_PASS


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_rules_name_seeds_and_turns_that_exist(case: Case):
    keys = {seed.key for seed in case.seeds}
    assert len(keys) == len(case.seeds)
    for rule in case.rules:
        key = getattr(rule, "key", None) or getattr(rule, "memory_id", None)
        if isinstance(rule, SeedKept | SeedUpdated | NotInBlock) or (
            isinstance(rule, Called) and key and not key.startswith("<")
        ):
            assert key in keys, f"{case.name}: {rule.label}"
        for turn in (getattr(rule, "turn", None), getattr(rule, "after", None)):
            assert turn is None or 1 <= abs(turn) <= len(case.turns), f"{case.name}: {rule.label}"
        assert rule.label


ARCHIVE_CASES = [
    "archive_found_by_search",
    "archived_preference_updated",
    "lists_with_most_archived",
]


@pytest.mark.parametrize("name", ARCHIVE_CASES)
def test_the_archive_cases_seed_more_than_the_block_budget_holds(name):
    [case] = select([name])
    tokens = sum(line_tokens("a1b2c3d4", seed.subject, seed.content) for seed in case.seeds)
    assert tokens > lines_budget(case.memory_token_budget) + 100
    # The oldest, so the block leaves it out first; the rules say it is archived.
    assert NotInBlock(case.seeds[0].key) in case.rules


def test_the_compaction_case_outgrows_its_history_budget_on_the_users_words_alone():
    [case] = select(["monday_after_compaction"])
    assert case.history_token_budget == TINY_HISTORY_BUDGET
    before_last = sum(count_tokens(turn.text) for turn in case.turns[:-1])
    assert before_last > TINY_HISTORY_BUDGET * 0.85  # the date lines and tool turns add more
    assert any(isinstance(rule, Compacted) for rule in case.rules)


def test_every_rule_of_the_instructions_has_a_case_or_a_reason():
    names = {case.name for case in CASES}
    assert set(RULE_CASES) | set(NOT_MEASURED) == set(RuleName)
    assert not set(RULE_CASES) & set(NOT_MEASURED)
    assert all(cases and set(cases) <= names for cases in RULE_CASES.values())


def test_select_takes_names_and_globs_in_table_order():
    assert [c.name for c in select(["secret_pin", "boss_*"])] == [
        "boss_asks_first",
        "boss_known_in_new_conversation",
        "secret_pin",
    ]
    with pytest.raises(ValueError, match="no case matches nope"):
        select(["nope"])


def test_a_case_is_skipped_only_while_the_bot_lacks_a_tool_it_needs():
    [case] = select(["explicit_save"])
    assert missing_tools(dataclasses.replace(case, requires_tools=("add_to_memory",))) == []
    lacking = dataclasses.replace(case, requires_tools=("add_to_memory", "no_such_tool"))
    assert missing_tools(lacking) == ["no_such_tool"]


def test_every_case_has_a_script_that_passes_it_even_those_waiting_for_a_tool():
    assert set(IDEAL) == {case.name for case in CASES}


async def test_every_case_passes_with_a_model_that_does_what_it_asks(fake, options):
    fake.default = ideal_model(RUNNABLE)
    result = await run(RUNNABLE, options)
    failed = {case.case.name: case.trials[0].failures for case in result.cases if not case.ok}
    assert failed == {}
    assert result.exit_code == 0


async def broken_rules(cases: list[Case], options, fake) -> dict[str, set[str]]:
    """Return, per case, the labels of the rules the wrong models broke: OK, eager, WRONG."""
    return (await wrong_runs(cases, options, fake))[0]


async def wrong_runs(cases: list[Case], options, fake) -> tuple[dict[str, set[str]], list]:
    """Run the wrong models; return the rules they broke per case, and the OK and eager runs."""
    broken: dict[str, set[str]] = defaultdict(set)
    runs = [(saying("OK"), cases), (eager, cases)]
    # The cases' wrong models run together, the k-th of each case in the k-th run: a few
    # runs rather than one per model.
    for k in range(max((len(WRONG.get(c.name, [])) for c in cases), default=0)):
        chosen = [c for c in cases if len(WRONG.get(c.name, [])) > k]
        runs.append((by_case({c.name: WRONG[c.name][k] for c in chosen}, chosen), chosen))
    results = []
    for model, chosen in runs:
        fake.default = model
        results.append(await run(chosen, options))
        for result in results[-1].cases:
            broken[result.case.name].update(f.rule for t in result.trials for f in t.failures)
    return broken, results[:2]


def unbroken(cases: list[Case], broken: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Return the rules no wrong model broke, but for set-up checks and the product's own."""
    return [
        (case.name, rule.label)
        for case in cases
        for rule in case.rules
        if not rule.label.startswith("setup:")
        and (case.name, rule.label) not in PRODUCT_GUARANTEES
        and rule.label not in broken[case.name]
    ]


async def test_every_rule_of_every_case_can_fail_and_every_case_fails_doing_nothing_or_all(
    fake, options
):
    broken, (idle, keen) = await wrong_runs(RUNNABLE, options, fake)
    assert unbroken(RUNNABLE, broken) == []
    # A must-pass case needs the right action, not only the absence of a wrong one.
    assert [result.case.name for result in idle.cases if result.case.must_pass and result.ok] == []
    # What a model that does nothing passes must be what one that saves everything fails.
    restraint = {result.case.name for result in idle.cases if result.passes}
    assert restraint and all(not r.passes for r in keen.cases if r.case.name in restraint)


@dataclasses.dataclass(frozen=True)
class AlwaysHolds:
    """A rule that cannot fail: the kind of defect the test above catches."""

    label: str = "looks fine"

    def check(self, transcript) -> str | None:
        return None


async def test_a_rule_that_always_passes_is_caught(fake, options):
    [case] = select(["secret_pin"])
    mutated = dataclasses.replace(case, rules=(*case.rules, AlwaysHolds()))
    assert unbroken([mutated], await broken_rules([mutated], options, fake)) == [
        ("secret_pin", "looks fine")
    ]


def test_the_open_question_is_folded_by_the_yes_that_answers_it():
    [case] = select(["open_question_across_compaction"])
    budget = case.history_token_budget
    assert budget == TINY_HISTORY_BUDGET
    draft, yes = (count_tokens(turn.text) for turn in case.turns)
    # Over the budget on its own (never folded unanswered), so the yes folds it with its question.
    assert draft > budget and yes < 20
    assert Compacted(after=1, by=-1) in case.rules
