"""A trial's score, a case's pass rate over its trials, and the run's exit code."""

import math
from dataclasses import dataclass, field

from evals.case import Case
from evals.fingerprint import first_fingerprint
from evals.judge import Verdict
from evals.prices import Prices
from evals.transcript import Transcript, Usage

# A case passes when at least this share of its trials pass: 2 of 3, scaled for other counts.
PASS_SHARE = 2 / 3


@dataclass(frozen=True)
class Failure:
    """A rule a trial broke, and why."""

    rule: str
    reason: str


@dataclass
class TrialResult:
    """One trial of a case: its transcript, the rules it broke, the judge's verdicts."""

    case: str
    number: int
    transcript: Transcript
    failures: list[Failure]
    verdicts: list[Verdict] = field(default_factory=list)
    fingerprint: str | None = None

    @property
    def passed(self) -> bool:
        """Tell whether every rule held and the trial ran to the end."""
        return not self.failures

    @property
    def models(self) -> set[str]:
        """Return the model ids the API answered with."""
        return {e.response["model"] for e in self.transcript.exchanges if "model" in e.response}


def score(case: Case, transcript: Transcript) -> list[Failure]:
    """Return the rules the transcript breaks; an interrupted trial fails as such alone."""
    if transcript.error is not None:
        return [Failure("the trial runs to the end", transcript.error)]
    return [
        Failure(rule.label, reason)
        for rule in case.rules
        if (reason := rule.check(transcript)) is not None
    ]


def required_passes(trials: int, every_trial: bool = False) -> int:
    """Return how many of this many trials must pass: 2 of 3, 1 of 1, 4 of 5, 7 of 10."""
    if every_trial:
        return trials
    return math.ceil(trials * PASS_SHARE - 1e-9)


@dataclass
class CaseResult:
    """A case's trials, or why it was skipped."""

    case: Case
    trials: list[TrialResult] = field(default_factory=list)
    skipped: str | None = None

    @property
    def passes(self) -> int:
        """Return how many trials passed."""
        return sum(trial.passed for trial in self.trials)

    @property
    def ok(self) -> bool:
        """Tell whether enough trials passed (a skipped case is not failed)."""
        needed = required_passes(len(self.trials), self.case.every_trial)
        return self.skipped is not None or self.passes >= needed


@dataclass
class RunResult:
    """Everything a run measured."""

    model: str
    trials_per_case: int
    prices: Prices
    cases: list[CaseResult]
    judge_usage: Usage = field(default_factory=Usage)

    @property
    def all_trials(self) -> list[TrialResult]:
        """Return every trial of every case, in case order."""
        return [trial for case in self.cases for trial in case.trials]

    @property
    def usage(self) -> Usage:
        """Return the tokens of the bot's own calls (agent and compaction), judge excluded."""
        return sum((t.transcript.usage() for t in self.all_trials), Usage())

    @property
    def fingerprint(self) -> str | None:
        """Return the fingerprint of the run's first request that offered tools, in case order."""
        return first_fingerprint([e for t in self.all_trials for e in t.transcript.exchanges])

    @property
    def failed_must_pass(self) -> list[str]:
        """Return the must-pass cases that fell below the required passes."""
        return [c.case.name for c in self.cases if c.case.must_pass and not c.ok]

    @property
    def exit_code(self) -> int:
        """Return 1 when a must-pass case fell below the required passes, else 0."""
        return 1 if self.failed_must_pass else 0
