"""Run the selected cases' trials, a few at a time, each on a database of its own."""

import asyncio
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient

from evals.case import Case
from evals.fingerprint import first_fingerprint
from evals.judge import Judge
from evals.prices import Prices
from evals.recorder import recording_client
from evals.results import CaseResult, RunResult, TrialResult, score
from evals.sandbox import Databases, trial_settings
from evals.transcript import Usage
from evals.trial import run_trial
from memory.tools import MEMORY_TOOLS, tool_definitions


@dataclass(frozen=True)
class RunOptions:
    """How to run: which model, how often, against which API, and what to judge with."""

    model: str
    trials: int
    api_key: str
    prices: Prices
    base_url: str | None = None
    parallel: int = 4
    judge: bool = True
    judge_model: str | None = None
    # A SQLite database already migrated to head, to copy for each trial (the offline tests
    # migrate one per test session); None: each run migrates its own.
    template: Path | None = None


def missing_tools(case: Case) -> list[str]:
    """Return the tools a case needs that the bot does not offer the model."""
    offered = {tool["name"] for tool in tool_definitions(MEMORY_TOOLS)}
    return [name for name in case.requires_tools if name not in offered]


class Runner:
    """Runs trials on fresh databases and scores them; one per run."""

    def __init__(
        self,
        options: RunOptions,
        databases: Databases,
        judge: Judge | None,
        http_client: DefaultAsyncHttpxClient,
    ):
        self._options = options
        self._databases = databases
        self._judge = judge
        self._http_client = http_client
        self._gate = asyncio.Semaphore(options.parallel)

    async def trial(self, case: Case, number: int) -> TrialResult:
        """Run, score and judge one trial of a case."""
        options = self._options
        async with self._gate:
            path = await self._databases.fresh(f"{case.name}-{number}")
            try:
                settings = trial_settings(
                    case, options.model, options.api_key, options.base_url, path
                )
                transcript = await run_trial(case, settings, self._http_client)
            finally:
                self._databases.discard(path)
            verdicts = []
            if self._judge is not None and transcript.error is None:
                verdicts = [await self._judge.verdict(check, transcript) for check in case.judged]
        failures = score(case, transcript)
        return TrialResult(
            case.name,
            number,
            transcript,
            failures,
            verdicts,
            first_fingerprint(transcript.exchanges),
        )


async def _case_result(
    runner: Runner, case: Case, trials: int, progress: Callable[[TrialResult], None]
) -> CaseResult:
    """Run a case's trials concurrently (the runner's gate limits them), or skip the case."""
    if missing := missing_tools(case):
        return CaseResult(case, skipped=f"needs {', '.join(missing)}, which the bot does not offer")

    async def reported(number: int) -> TrialResult:
        """Run a trial and report it as soon as it is done."""
        result = await runner.trial(case, number)
        progress(result)
        return result

    results = await asyncio.gather(*(reported(n) for n in range(1, trials + 1)))
    return CaseResult(case, list(results))


async def run(
    cases: list[Case],
    options: RunOptions,
    progress: Callable[[TrialResult], None] = lambda _: None,
) -> RunResult:
    """Run every case's trials; return the results in case order."""
    judge_client = None
    if options.judge:
        judge_client = AsyncAnthropic(api_key=options.api_key, base_url=options.base_url)
    judge = Judge(judge_client, options.judge_model or options.model) if judge_client else None
    http_client = recording_client()
    try:
        with tempfile.TemporaryDirectory(prefix="memory-evals-") as directory:
            databases = Databases(Path(directory), options.template)
            await databases.prepare()
            runner = Runner(options, databases, judge, http_client)
            results = await asyncio.gather(
                *(_case_result(runner, case, options.trials, progress) for case in cases)
            )
    finally:
        await http_client.aclose()
        if judge_client is not None:
            await judge_client.close()
    judge_usage = judge.usage if judge else Usage()
    return RunResult(options.model, options.trials, options.prices, list(results), judge_usage)
