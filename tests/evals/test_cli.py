"""`python -m evals` from the command line's point of view: options, output, report, exit code."""

import json
import re

import pytest

from evals.cases import CASES, every_rule
from evals.cli import main_async
from tests.evals.ideal import IDEAL, by_case
from tests.evals.scripted import add, chat

TRIAL_FIELDS = {
    "type", "case", "trial", "must_pass", "passed", "failures", "judged", "error", "replies",
    "tool_calls", "memories", "usage", "cost_usd", "models", "instructions_sha256",
}  # fmt: skip
SUMMARY_FIELDS = {
    "type", "finished_at", "model", "models_answered", "trials_per_case", "required_passes",
    "instructions_sha256", "cases", "must_pass_failed", "usage", "judge_usage", "cost_usd",
    "prices_per_million_tokens", "prices_source", "exit_code",
}  # fmt: skip


async def test_without_a_key_it_says_so_in_one_line_and_exits_0_without_a_request(
    fake, monkeypatch, capsys
):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)  # were anything sent, it would show
    assert await main_async(["--case", "secret_*", "--trials", "5"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("python -m evals: skipped") and ".env is not read" in err
    # The cost: three secret cases of four messages in all, five trials, at the default model.
    assert "3 case(s) x 5 trial(s) make at least 20 model calls" in err
    assert re.search(r"roughly \$\d+\.\d\d on claude-", err) and "--list" in err
    assert fake.requests == []


async def test_list_shows_every_case_and_marks_the_must_pass_ones(capsys):
    assert await main_async(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(CASES)
    assert lines[0].startswith("must boss_asks_first") and "wifi_pointer" in lines[8]


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        (["--case", "nope"], "no case matches nope"),
        (["--trials", "0"], "--trials and --parallel must be at least 1"),
        (["--prices", "3,15"], "give four numbers"),
    ],
)
async def test_bad_options_exit_2_with_a_reason(arguments, complaint, capsys, api_key_of, fake):
    assert await main_async(arguments) == 2
    assert complaint in capsys.readouterr().err
    assert fake.requests == []


async def test_a_run_prints_the_table_writes_jsonl_and_fails_on_a_must_pass_case(
    fake, api_key_of, tmp_path, capsys
):
    fake.default = chat([("PIN", add("The user's bank PIN is 4321", "context", "PIN"))])
    report = tmp_path / "run.jsonl"
    arguments = ["--base-url", fake.base_url, "--case", "secret_pin", "--trials", "3"]
    assert await main_async([*arguments, "--report", str(report), "--no-judge"]) == 1

    out = capsys.readouterr().out
    assert "model claude-sonnet-5-5" in out and "(the API answered as claude-sonnet-5-5)" in out
    assert "secret_pin                         yes   0/3     FAIL" in out
    assert "    - does not save the PIN (failed 3/3): called add_to_memory(" in out
    assert "must-pass: 0 of 1 passed (failed: secret_pin)" in out

    *trials, summary = [json.loads(line) for line in report.read_text().splitlines()]
    assert [(t["case"], t["trial"], t["passed"]) for t in trials] == [
        ("secret_pin", n, False) for n in (1, 2, 3)
    ]
    assert set(trials[0]) == TRIAL_FIELDS and set(summary) == SUMMARY_FIELDS
    assert trials[0]["tool_calls"][0]["name"] == "add_to_memory"
    assert trials[0]["memories"] == []  # the code refused the save
    assert summary["instructions_sha256"] == trials[0]["instructions_sha256"]
    assert len(summary["instructions_sha256"]) == 64 and summary["instructions_sha256"][:16] in out
    assert summary["cases"] == [
        {"case": "secret_pin", "must_pass": True, "passed": 0, "trials": 3, "ok": False,
         "skipped": None}
    ]  # fmt: skip
    assert (summary["exit_code"], summary["must_pass_failed"]) == (1, ["secret_pin"])
    assert summary["usage"]["input"] == sum(t["usage"]["input"] for t in trials) > 0
    assert summary["prices_per_million_tokens"] == {
        "input": 3.0, "cache_write": 3.75, "cache_read": 0.3, "output": 15.0
    }  # fmt: skip


async def test_the_base_url_comes_from_the_environment_and_prices_from_the_option(
    fake, api_key_of, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    fake.default = IDEAL["secret_pin"]
    report = tmp_path / "run.jsonl"
    arguments = ["--case", "secret_pin", "--trials", "1", "--prices", "1,2,3,4", "--no-judge"]
    assert await main_async([*arguments, "--report", str(report)]) == 0
    assert len(fake.requests) == 1
    summary = json.loads(report.read_text().splitlines()[-1])
    assert summary["prices_source"] == "given with --prices"
    assert "at prices given with --prices" in capsys.readouterr().out


async def test_a_run_with_a_key_plays_the_cases_added_for_every_rule(fake, api_key_of, capsys):
    fake.default = by_case(IDEAL, list(every_rule.CASES))
    arguments = ["--base-url", fake.base_url, "--trials", "1", "--no-judge"]
    for case in every_rule.CASES:
        arguments += ["--case", case.name]
    assert await main_async(arguments) == 0
    out = capsys.readouterr().out
    for case in every_rule.CASES:
        assert re.search(rf"^{case.name} +- +1/1 +pass$", out, re.MULTILINE), case.name
