"""`python -m evals`: read the options, run the selected cases, print the table, write JSONL."""

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

from bot.agent.instructions import STATIC_INSTRUCTIONS
from bot.log_setup import configure_logging
from bot.settings import DEFAULT_MODEL
from evals.case import Case
from evals.cases import CASES, UnknownCase, select
from evals.prices import parse_prices, prices_for
from evals.report import jsonl, table
from evals.results import TrialResult, required_passes
from evals.runner import RunOptions, run
from memory.tokens import count_tokens
from memory.tools import MEMORY_TOOLS, tool_definitions

NO_KEY = (
    "python -m evals: skipped, nothing was run: ANTHROPIC_API_KEY is not set in the "
    "environment (.env is not read). The evaluation calls the real Messages API and costs "
    "money: {cost}. `python -m evals --list` shows the cases."
)


def run_cost(cases: list[Case], trials: int, model: str) -> str:
    """Say roughly what a run of these cases costs: its calls, and their uncached prefix."""
    calls = trials * sum(len(case.turns) for case in cases)
    prefix = count_tokens(STATIC_INSTRUCTIONS) + count_tokens(
        json.dumps(tool_definitions(MEMORY_TOOLS))
    )
    dollars = calls * prefix * prices_for(model).input / 1_000_000
    return (
        f"{len(cases)} case(s) x {trials} trial(s) make at least {calls} model calls of about "
        f"{prefix:,} tokens each (instructions and tools), roughly ${dollars:.2f} on {model} "
        "before caching and tool rounds; a run prints what it really cost"
    )


def parser() -> argparse.ArgumentParser:
    """Return the command line's parser."""
    p = argparse.ArgumentParser(
        prog="python -m evals",
        description="Measure the bot's memory behaviour against the real Messages API.",
    )
    p.add_argument("--model", default=DEFAULT_MODEL, help=f"model id (default {DEFAULT_MODEL})")
    p.add_argument("--trials", type=int, default=3, help="trials per case (default 3)")
    p.add_argument(
        "--case",
        action="append",
        metavar="NAME",
        help="a case name or glob, such as 'secret_*'; repeatable (default: every case)",
    )
    p.add_argument("--report", type=Path, metavar="FILE", help="write JSONL here")
    p.add_argument(
        "--base-url",
        default=os.environ.get("ANTHROPIC_BASE_URL") or None,
        help="Messages API base URL (default: ANTHROPIC_BASE_URL, else Anthropic's)",
    )
    p.add_argument("--parallel", type=int, default=4, help="trials at once (default 4)")
    p.add_argument("--no-judge", action="store_true", help="skip the judged checks")
    p.add_argument("--judge-model", help="model for the judged checks (default: --model)")
    p.add_argument(
        "--prices",
        metavar="IN,CW,CR,OUT",
        help="dollars per million tokens: input, cache write, cache read, output",
    )
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--verbose", action="store_true", help="log the bot's INFO lines")
    return p


def list_cases() -> str:
    """Return one line per case: must-pass mark, name, what it measures."""
    return "\n".join(
        f"{'must ' if case.must_pass else '     '}{case.name:<34} {case.about}" for case in CASES
    )


def progress(result: TrialResult) -> None:
    """Say on stderr that a trial finished, so a long run shows it is alive."""
    verdict = "pass" if result.passed else "fail"
    print(f"  {result.case} #{result.number}: {verdict}", file=sys.stderr, flush=True)


def options_from(args: argparse.Namespace, api_key: str) -> RunOptions:
    """Return the run's options from the parsed arguments; ValueError names a bad one."""
    if args.trials < 1 or args.parallel < 1:
        raise ValueError("--trials and --parallel must be at least 1")
    prices = parse_prices(args.prices) if args.prices else prices_for(args.model)
    return RunOptions(
        model=args.model,
        trials=args.trials,
        api_key=api_key,
        prices=prices,
        base_url=args.base_url,
        parallel=args.parallel,
        judge=not args.no_judge,
        judge_model=args.judge_model,
    )


async def run_cli(args: argparse.Namespace) -> int:
    """Run the evaluation; return 0, 1 when a must-pass case failed, 2 on bad options."""
    if args.list:
        print(list_cases())
        return 0
    api_key = os.environ.get("ANTHROPIC_API_KEY", "").strip()
    try:
        cases = select(args.case)
        options = options_from(args, api_key)
    except (UnknownCase, ValueError) as error:
        print(f"python -m evals: {error}", file=sys.stderr)
        return 2
    if not api_key:
        print(NO_KEY.format(cost=run_cost(cases, options.trials, options.model)), file=sys.stderr)
        return 0
    needed = required_passes(options.trials)
    print(
        f"Running {len(cases)} case(s) x {options.trials} trial(s) on {options.model}; "
        f"a case passes with {needed} of {options.trials} trials.",
        file=sys.stderr,
    )
    result = await run(cases, options, progress)
    print(table(result))
    if args.report:
        args.report.write_text(jsonl(result), encoding="utf-8")
    return result.exit_code


async def main_async(argv: list[str] | None = None) -> int:
    """Parse the arguments and run, inside a running event loop."""
    return await run_cli(parser().parse_args(argv))


def main(argv: list[str] | None = None) -> int:
    """Run from the command line, logging through the bot's redacting formatter."""
    args = parser().parse_args(argv)
    key = os.environ.get("ANTHROPIC_API_KEY", "")
    configure_logging("INFO" if args.verbose else "WARNING", [key])
    return asyncio.run(run_cli(args))
