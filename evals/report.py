"""The run as a table for people and as JSONL for machines (one line per trial, then a summary)."""

import json
from collections import Counter
from dataclasses import asdict
from datetime import UTC, datetime

from evals.results import CaseResult, RunResult, TrialResult, required_passes

NAME_WIDTH = 34
HASH_SHOWN = 16


def _verdict(result: CaseResult) -> tuple[str, str]:
    """Return the passed column and the verdict of a case."""
    if result.skipped:
        return "-", f"skipped: {result.skipped}"
    return f"{result.passes}/{len(result.trials)}", "pass" if result.ok else "FAIL"


def _failed_rules(result: CaseResult) -> list[str]:
    """Return one line per rule that failed in any trial: how often, and the first reason."""
    counts: Counter[str] = Counter()
    reasons: dict[str, str] = {}
    for trial in result.trials:
        for failure in trial.failures:
            counts[failure.rule] += 1
            reasons.setdefault(failure.rule, failure.reason)
    total = len(result.trials)
    return [f"    - {rule} (failed {n}/{total}): {reasons[rule]}" for rule, n in counts.items()]


def _case_lines(run: RunResult) -> list[str]:
    """Return the table's header and a row per case, its failed rules under it."""
    lines = [f"{'case':<{NAME_WIDTH}} must  passed  verdict"]
    for result in run.cases:
        passed, verdict = _verdict(result)
        must = "yes" if result.case.must_pass else "-"
        lines.append(f"{result.case.name:<{NAME_WIDTH}} {must:<5} {passed:<7} {verdict}")
        lines += _failed_rules(result)
    return lines


def _totals(run: RunResult) -> list[str]:
    """Return the lines of totals: cases, trials, tokens and cost."""
    ran = [c for c in run.cases if not c.skipped]
    musts = [c for c in ran if c.case.must_pass]
    trials = run.all_trials
    errors = sum(t.transcript.error is not None for t in trials)
    u, j, prices = run.usage, run.judge_usage, run.prices
    failed = ", ".join(run.failed_must_pass) or "none"
    return [
        f"Cases: {sum(c.ok for c in ran)} of {len(ran)} passed "
        f"({required_passes(run.trials_per_case)} of {run.trials_per_case} trials needed), "
        f"{len(run.cases) - len(ran)} skipped; must-pass: {sum(c.ok for c in musts)} of "
        f"{len(musts)} passed (failed: {failed})",
        f"Trials: {sum(t.passed for t in trials)} of {len(trials)} passed; "
        f"{errors} stopped by an API error",
        f"Tokens, bot (agent and compaction): {u.input:,} input, {u.cache_read:,} cache read, "
        f"{u.cache_write:,} cache write, {u.output:,} output",
        f"Tokens, judge: {j.input:,} input, {j.output:,} output",
        f"Cost: ${prices.cost(u):.2f} bot + ${prices.cost(j):.2f} judge, at prices "
        f"{prices.source} (dollars per million tokens: input {prices.input:g}, cache write "
        f"{prices.cache_write:g}, cache read {prices.cache_read:g}, output {prices.output:g}; "
        "--prices overrides)",
    ]


def _judged_lines(run: RunResult) -> list[str]:
    """Return the judged checks' tallies per case, or nothing when none were judged."""
    lines = []
    for result in run.cases:
        tallies: dict[str, Counter] = {}
        for trial in result.trials:
            for v in trial.verdicts:
                tallies.setdefault(v.label, Counter())[v.verdict] += 1
        for label, tally in tallies.items():
            lines.append(
                f"{result.case.name:<{NAME_WIDTH}} {label}: {tally[True]} yes, "
                f"{tally[False]} no, {tally[None]} unclear"
            )
    if not lines:
        return []
    return ["", "Judged checks (reported apart; never part of a pass or the exit code):", *lines]


def table(run: RunResult) -> str:
    """Return the run as text: a row per case, failed rules under it, totals, judged checks."""
    answered = sorted({m for t in run.all_trials for m in t.models})
    shown = f" (the API answered as {', '.join(answered)})" if answered else ""
    digest = "none (no request was made)"
    if run.fingerprint:
        digest = f"sha256 {run.fingerprint[:HASH_SHOWN]}... (in full in --report)"
    header = [
        f"Memory evaluation: model {run.model}{shown}, {run.trials_per_case} trial(s) per case",
        f"Instructions and tools as sent: {digest}",
        "",
    ]
    return "\n".join([*header, *_case_lines(run), "", *_totals(run), *_judged_lines(run)])


def _trial_record(run: RunResult, case: CaseResult, trial: TrialResult) -> dict:
    """Return a trial as a JSON object."""
    transcript = trial.transcript
    return {
        "type": "trial",
        "case": trial.case,
        "trial": trial.number,
        "must_pass": case.case.must_pass,
        "passed": trial.passed,
        "failures": [asdict(f) for f in trial.failures],
        "judged": [asdict(v) for v in trial.verdicts],
        "error": transcript.error,
        "replies": transcript.replies,
        "tool_calls": [asdict(call) for call in transcript.calls],
        "memories": [
            {
                "id": r.item.id,
                "category": r.item.category.value,
                "subject": r.item.subject,
                "content": r.item.content,
                "version": r.item.version,
                "forgotten": r.item.deleted_at is not None,
            }
            for r in transcript.memories
        ],
        "usage": asdict(transcript.usage()),
        "cost_usd": round(run.prices.cost(transcript.usage()), 6),
        "models": sorted(trial.models),
        "instructions_sha256": trial.fingerprint,
    }


def _summary_record(run: RunResult) -> dict:
    """Return the run's summary as a JSON object."""
    return {
        "type": "summary",
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "model": run.model,
        "models_answered": sorted({m for t in run.all_trials for m in t.models}),
        "trials_per_case": run.trials_per_case,
        "required_passes": required_passes(run.trials_per_case),
        "instructions_sha256": run.fingerprint,
        "cases": [
            {
                "case": c.case.name,
                "must_pass": c.case.must_pass,
                "passed": c.passes,
                "trials": len(c.trials),
                "ok": c.ok,
                "skipped": c.skipped,
            }
            for c in run.cases
        ],
        "must_pass_failed": run.failed_must_pass,
        "usage": asdict(run.usage),
        "judge_usage": asdict(run.judge_usage),
        "cost_usd": {
            "bot": round(run.prices.cost(run.usage), 6),
            "judge": round(run.prices.cost(run.judge_usage), 6),
        },
        "prices_per_million_tokens": run.prices.as_dict(),
        "prices_source": run.prices.source,
        "exit_code": run.exit_code,
    }


def jsonl(run: RunResult) -> str:
    """Return one JSON line per trial, then a summary line."""
    records = [_trial_record(run, case, t) for case in run.cases for t in case.trials]
    records.append(_summary_record(run))
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
