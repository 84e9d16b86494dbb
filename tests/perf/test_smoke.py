"""Run every benchmark at tiny sizes, so the suite keeps working; speed is not judged here."""

import asyncio
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from bot.telegram.format.rich import rich_reply
from memory.embeddings import local_embedder
from tests import pg
from tests.conftest import selected_engines
from tests.perf import bench_overhead, bench_recall, bench_scale
from tests.perf.common import Config, percentile
from tests.perf.data import long_reply
from tests.perf.run import BENCHMARKS, markdown_table, parse_args, run_benchmarks, text_table


def assert_well_formed(rows) -> None:
    for row in rows:
        assert row.figure and row.value, row
        assert row.command.startswith("python -m tests.perf "), row
        assert row.numbers and all(math.isfinite(n) for n in row.numbers), row
        assert (row.met is None) == (not row.target), row


def made_up_locomo(folder: Path) -> Path:
    """Write a tiny conversation in LoCoMo's format (our own words, not the dataset's)."""
    turn = lambda n, who, words, **more: {"speaker": who, "dia_id": n, "text": words, **more}  # noqa: E731
    conversation = {
        "speaker_a": "Ann", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            turn("D1:1", "Ann", "I adopted a grey cat last week"),
            turn("D1:2", "Ben", "Nice! I went sailing on the lake", blip_caption="a small boat"),
        ],
        "session_2_date_time": "10:00 am on 9 June, 2023",
        "session_2": [turn("D2:1", "Ann", "The cat sleeps on my keyboard all day")],
    }  # fmt: skip
    questions = [
        {"question": "What pet did Ann adopt?", "answer": "a cat", "evidence": ["D1:1"],
         "category": 4},
        {"question": "When did Ben go sailing?", "answer": "May", "evidence": ["D:1:2"],
         "category": 2},
        {"question": "Where does the cat sleep?", "answer": "keyboard",
         "evidence": ["D2:1; D1:1"], "category": 1},
    ]  # fmt: skip
    (folder / "made_up.json").write_text(
        json.dumps({"conversation": conversation, "qa": questions})
    )
    return folder


async def test_every_benchmark_reports_every_figure_with_finite_numbers(tmp_path):
    config = replace(Config().smoke(), recall_data=made_up_locomo(tmp_path))
    # Figure 11 times its reply whichever way it goes; at full size, as a Rich Message.
    assert rich_reply(long_reply(config.stream_tokens))
    assert rich_reply(long_reply(Config().stream_tokens))
    in_process = [name for name in BENCHMARKS if name != "process"]
    # The bot subprocess spends its first seconds importing, on the other core: overlap it.
    first, process = await asyncio.gather(
        run_benchmarks(in_process, config), run_benchmarks(["process"], config)
    )
    rows = first + process
    figures = {key: [r.figure for r in rows if r.key == key] for key in BENCHMARKS}
    # and the references, created and streamed, and the ratio to them
    assert len(figures["overhead"]) == len(config.memories) + 3
    assert len(figures["concurrency"]) == 4
    assert len(figures["cache"]) == 2
    assert len(figures["prompt"]) == 1 + len(config.render_sizes)
    assert len(figures["sql"]) == 3
    assert len(figures["process"]) == 5  # new, migrated, reference; the two memories
    assert len(figures["flood"]) == 1
    assert len(figures["format"]) == 2
    # searches: memories, turns by words, by words and meaning; saves: time, tokens; and the
    # question's vector when the local model is installed
    assert len(figures["archive"]) == 5 + (local_embedder() is not None)
    assert len(figures["files"]) == 3
    assert len(figures["streaming"]) == 4
    assert len(figures["voice"]) == 2
    assert len(figures["tidy"]) == len(config.memories)
    assert len(figures["web"]) == 1
    assert len(figures["sources"]) == 1
    assert len(figures["recall"]) == 3
    assert len(figures["native"]) == 2
    assert_well_formed(rows)
    assert len(markdown_table(rows).splitlines()) == len(rows) + 2
    assert len(text_table(rows, details=True).splitlines()) >= len(rows) + 2


async def test_the_overhead_benchmark_runs_on_postgres():
    if "postgres" not in selected_engines():
        pytest.skip("TEST_DATABASES leaves Postgres out")
    pg.require_postgres()  # fails in CI, like every other Postgres test
    # Two turns of the bot and the references: three messages split two ways, one each.
    config = replace(Config().smoke(), backends=("postgres",), messages=3, overhead_rounds=2)
    rows = await run_benchmarks(["overhead"], config)
    assert rows[0].figure == (
        f"1. Bot overhead per message, p50 / p99: Postgres, {config.memories[0]} memories"
    )
    assert rows[0].details[0].startswith("2 messages;")
    assert_well_formed(rows)


async def test_the_scale_benchmark_runs_one_and_two_web_processes_on_postgres(tmp_path):
    if "postgres" not in selected_engines():
        pytest.skip("TEST_DATABASES leaves Postgres out")
    pg.require_postgres()  # fails in CI, like every other Postgres test
    rows = await bench_scale.run(bench_scale.tiny(Config()), tmp_path)
    assert [r.figure.split(":")[0] for r in rows] == [
        "20. Scale-out, 1 web process(es)",
        "20. Scale-out, 2 web process(es)",
    ]
    assert_well_formed(rows)
    assert all(r.numbers[0] > 0 for r in rows)


async def test_recall_says_when_it_has_no_data_and_reports_nothing(tmp_path, capsys):
    config = replace(Config().smoke(), recall_data=tmp_path / "absent")
    assert await bench_recall.run(config, tmp_path) == []
    assert "no LoCoMo files" in capsys.readouterr().out


def test_command_line_options_override_the_sizes():
    names, config, _ = parse_args(["--quick", "overhead", "sql", "--memories", "0,5"])
    assert names == ["overhead", "sql"]
    assert config.memories == (0, 5)
    assert config.messages == Config().quick().messages
    names, config, _ = parse_args([])
    assert names == list(BENCHMARKS) and config == Config()


def test_rounds_add_up_to_one_sample_of_every_message():
    samples = bench_overhead.Samples([0.001], [0.002], [True], cpu=0.010)
    samples.extend(bench_overhead.Samples([0.003] * 3, [0.004] * 3, [False] * 3, cpu=0.020))
    assert samples.total == pytest.approx([0.003, 0.007, 0.007, 0.007])
    assert samples.first_turn == [True, False, False, False]
    assert samples.cpu == pytest.approx(0.0175)  # per message, over all four


def test_targets_apply_where_the_issue_sets_them():
    samples = bench_overhead.Samples([0.001] * 4, [0.001] * 4, [True, False, False, False])
    [at_target] = bench_overhead.rows("sqlite", 1000, samples)
    [elsewhere] = bench_overhead.rows("postgres", 1000, samples)
    assert at_target.met is True and elsewhere.met is None
    assert percentile([1, 2, 3, 4, 5], 50) == 3 and percentile([1, 2], 99) == pytest.approx(1.99)
