"""`python -m bot` checks the Anthropic key and model at start-up: one line and exit 1."""

from bot.migrations import upgrade_database_async
from tests.builders import sqlite_url
from tests.process import bot_environment, run_to_exit


async def _start_up(fakes, tmp_path, *, webhook: bool = False, **extra: str):
    """Start `python -m bot` at the default log level on a migrated database until it exits."""
    url = sqlite_url(tmp_path / "bot.db")
    await upgrade_database_async(url)
    if webhook:
        # The check comes before setWebhook, and before anything listens on PORT.
        extra |= {"WEBHOOK_URL": "https://bot.example.com/hook", "PORT": "1"}
    tg, model = fakes
    env = bot_environment(tg, model, url, LOG_LEVEL="INFO", **extra)
    return await run_to_exit(env, tmp_path)


def _one_error_line(stdout: str, stderr: str, expected: str) -> None:
    """Check that the process wrote exactly the expected error line and nothing else."""
    assert stdout == "" and "Traceback" not in stderr
    # A web process says where it will serve before it starts; nothing else comes before.
    lines = [line for line in stderr.splitlines() if " INFO bot: serving webhooks on " not in line]
    assert len(lines) == 1 and lines[0].endswith(expected), stderr


# One check before serving raises each of these, polling or webhooks alike (PTB's post_init):
# each runs in one mode, which halves the process starts, and webhooks are tried once.
async def test_a_wrong_api_key_stops_start_up_with_one_line_before_serving_webhooks(
    fakes, tmp_path
):
    code, stdout, stderr = await _start_up(
        fakes, tmp_path, webhook=True, ANTHROPIC_API_KEY="sk-ant-api03-wrong-key"
    )
    assert code == 1
    _one_error_line(
        stdout,
        stderr,
        " ERROR bot: cannot use the model: the Anthropic API key (ANTHROPIC_API_KEY) is not "
        "valid (the API answered 401: invalid x-api-key)",
    )
    assert "sk-ant-api03-wrong-key" not in stderr
    assert fakes[1].requests == []  # no message was ever sent to the model


async def test_an_unknown_model_stops_start_up_with_one_line(fakes, tmp_path):
    model = fakes[1]
    model.models = {"claude-sonnet-5-5": "active"}
    code, stdout, stderr = await _start_up(fakes, tmp_path, ANTHROPIC_MODEL="claude-sonet-5-5")
    assert code == 1
    _one_error_line(
        stdout,
        stderr,
        " ERROR bot: cannot use the model: ANTHROPIC_MODEL 'claude-sonet-5-5' is not a model "
        "this API key can use (the API answered 404: model: claude-sonet-5-5)",
    )
    assert model.model_lookups == ["claude-sonet-5-5"]


async def test_a_retired_model_stops_start_up_with_one_line(fakes, tmp_path):
    fakes[1].models = {"claude-old-1": "retired"}
    code, stdout, stderr = await _start_up(fakes, tmp_path, ANTHROPIC_MODEL="claude-old-1")
    assert code == 1
    _one_error_line(
        stdout,
        stderr,
        " ERROR bot: cannot use the model: ANTHROPIC_MODEL 'claude-old-1' is retired: "
        "choose a current model",
    )
