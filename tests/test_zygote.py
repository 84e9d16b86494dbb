"""The fork server runs a command as `python -m` or `-c` would: its environment, its exit."""

import os
import signal
import sys
from pathlib import Path

from tests import zygote
from tests.process import spawn

ENV = {**os.environ, "PYTHONPATH": str(zygote.ROOT)}
SHOW = (
    "import os, sys; print(os.getcwd(), sys.argv, os.environ.get('ONLY_HERE'), sys.path[0]); "
    "print('to stderr', file=sys.stderr); sys.exit(int(sys.argv[1]))"
)


async def test_a_child_has_its_own_directory_arguments_environment_and_exit_code(tmp_path):
    process = await zygote.ZYGOTE.spawn(
        "-c", SHOW, ["3"], env=ENV | {"ONLY_HERE": "yes"}, cwd=tmp_path, merge_stderr=False
    )
    output, errors = await process.communicate()
    assert output.decode() == f"{tmp_path} ['-c', '3'] yes \n"
    assert errors == b"to stderr\n" and process.returncode == 3
    assert "ONLY_HERE" not in os.environ


async def test_a_signalled_child_ends_with_minus_the_signal_and_atexit_runs_on_a_clean_exit(
    tmp_path,
):
    code = "import atexit, time; atexit.register(print, 'atexit ran'); print('up', flush=True)"
    process = await zygote.ZYGOTE.spawn("-c", code, [], env=ENV, cwd=tmp_path, merge_stderr=True)
    assert await process.communicate() == (b"up\natexit ran\n", None)
    sleeper = await zygote.ZYGOTE.spawn(
        "-c",
        "import time; print('up', flush=True); time.sleep(60)",
        [],
        env=ENV,
        cwd=tmp_path,
        merge_stderr=True,
    )
    assert sleeper.stdout is not None and await sleeper.stdout.readline() == b"up\n"
    sleeper.send_signal(signal.SIGKILL)
    assert await sleeper.wait() == -signal.SIGKILL


async def test_a_module_runs_as_main_afresh_and_other_interpreter_settings_start_a_new_one(
    tmp_path,
):
    process = await zygote.ZYGOTE.spawn(
        "-m",
        "bot",
        [],
        env={
            "PATH": os.environ["PATH"],
            **{k: v for k, v in ENV.items() if k.startswith("PYTHON")},
        },
        cwd=tmp_path,
        merge_stderr=True,
    )
    output, _ = await process.communicate()
    assert process.returncode == 2 and output.startswith(b"Invalid settings: TELEGRAM_BOT_TOKEN")
    assert zygote.forkable((sys.executable, "-m", "bot"), ENV) == ("-m", "bot", [])
    assert zygote.forkable((sys.executable, "-m", "bot"), ENV | {"PYTHONHASHSEED": "7"}) is None
    alembic = str(Path(sys.executable).with_name("alembic"))
    assert zygote.forkable((alembic, "upgrade"), ENV) == (zygote.SCRIPT, alembic, ["upgrade"])
    assert zygote.forkable(("pg_dump", "--version"), ENV) is None
    version = await spawn(alembic, "--version", env=ENV, cwd=tmp_path)
    assert isinstance(version, zygote.Forked)
    output, _ = await version.communicate()
    assert version.returncode == 0 and output.startswith(b"alembic "), output
    fresh = await spawn(
        sys.executable, "-c", "print(1)", env=ENV | {"PYTHONHASHSEED": "7"}, cwd=tmp_path
    )
    assert not isinstance(fresh, zygote.Forked)
    await fresh.communicate()
