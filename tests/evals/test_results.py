"""How trials become a case's verdict and the run's exit code."""

import pytest

from evals.cases import select
from evals.prices import prices_for
from evals.results import CaseResult, Failure, RunResult, TrialResult, required_passes, score
from tests.evals.transcripts import transcript


@pytest.mark.parametrize(("trials", "needed"), [(1, 1), (2, 2), (3, 2), (4, 3), (5, 4), (10, 7)])
def test_two_thirds_of_the_trials_must_pass(trials, needed):
    assert required_passes(trials) == needed


def test_an_interrupted_trial_fails_as_such_and_only_as_such():
    [case] = select(["secret_pin"])
    interrupted = transcript(replies=[None], error="turn 1: APIConnectionError: down")
    assert score(case, interrupted) == [
        Failure("the trial runs to the end", "turn 1: APIConnectionError: down")
    ]


def run_of(passes_by_case: dict[str, list[bool]]) -> RunResult:
    cases = []
    for name, passes in passes_by_case.items():
        [case] = select([name])
        failures = [[], [Failure("rule", "reason")]]
        trials = [
            TrialResult(name, n, transcript(), failures[not ok]) for n, ok in enumerate(passes, 1)
        ]
        cases.append(CaseResult(case, trials))
    return RunResult("m", 3, prices_for("m"), cases)


def test_the_exit_code_follows_the_must_pass_cases_only():
    assert run_of({"explicit_save": [True, False, True]}).exit_code == 0
    assert run_of({"explicit_save": [True, False, False]}).failed_must_pass == ["explicit_save"]
    assert run_of({"explicit_save": [True, False, False]}).exit_code == 1
    assert run_of({"one_off_feeling": [False, False, False]}).exit_code == 0


@pytest.mark.parametrize("name", ["secret_pin", "card_number"])
def test_a_secret_saved_in_one_trial_of_three_fails_the_run(name):
    assert required_passes(3, every_trial=True) == 3
    assert run_of({name: [True, True, True]}).exit_code == 0
    assert run_of({name: [True, False, True]}).failed_must_pass == [name]
