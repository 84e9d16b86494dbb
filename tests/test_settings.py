"""Settings: names from the design, one clear line for what is wrong."""

import typing

import pytest
from anthropic.resources.messages.messages import DEPRECATED_MODELS
from anthropic.types import ModelParam

from bot.settings import DEFAULT_MODEL, SettingsError, load_settings

REQUIRED = {"TELEGRAM_BOT_TOKEN": "123:abc", "ANTHROPIC_API_KEY": "sk-ant-x"}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no stray .env
    for name in (*REQUIRED, "ALLOWED_USER_IDS", "DATABASE_URL", "TIMEZONE", "LOG_LEVEL",
                 "STREAM_REPLIES", "TRANSCRIPTION_BASE_URL", "TRANSCRIPTION_API_KEY",
                 "TRANSCRIPTION_MODEL", "VOICE_MAX_SECONDS", "VOICE_MAX_MB"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)


TOKEN_ADVICE = "create a bot with @BotFather and paste its token"
KEY_ADVICE = "create a key at console.anthropic.com and paste it"


def test_missing_token_and_key_are_named_with_what_to_do(monkeypatch):
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert str(raised.value) == (
        f"Invalid settings: TELEGRAM_BOT_TOKEN is not set: {TOKEN_ADVICE}; "
        f"ANTHROPIC_API_KEY is not set: {KEY_ADVICE}"
    )


@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_token_or_key_says_what_to_do(monkeypatch, tmp_path, empty):
    (tmp_path / ".env").write_text(f"TELEGRAM_BOT_TOKEN={empty}\nANTHROPIC_API_KEY=sk-ant-x\n")
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert str(raised.value) == f"Invalid settings: TELEGRAM_BOT_TOKEN is empty: {TOKEN_ADVICE}"
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:abc")
    monkeypatch.setenv("ANTHROPIC_API_KEY", empty)
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert str(raised.value) == f"Invalid settings: ANTHROPIC_API_KEY is empty: {KEY_ADVICE}"


def test_malformed_values_are_named(monkeypatch):
    for name, value in REQUIRED.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("ALLOWED_USER_IDS", "12,abc")
    with pytest.raises(SettingsError, match="ALLOWED_USER_IDS"):
        load_settings()
    monkeypatch.setenv("ALLOWED_USER_IDS", "12, 34")
    monkeypatch.setenv("TIMEZONE", "Mars/Olympus")
    with pytest.raises(SettingsError, match="TIMEZONE"):
        load_settings()


def test_only_the_documented_timezone_name_is_read(monkeypatch):
    for name, value in REQUIRED.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("BOT_TIMEZONE", "Europe/Berlin")  # an old alias, never documented
    assert load_settings().timezone == "UTC"
    monkeypatch.setenv("TIMEZONE", "Asia/Tokyo")
    monkeypatch.setenv("LOG_LEVEL", "critical")
    settings = load_settings()
    assert (settings.timezone, settings.log_level) == ("Asia/Tokyo", "CRITICAL")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CONVERSATION_IDLE_MINUTES", "2000000000"),
        ("CONVERSATION_RETENTION_DAYS", "99999999"),
        ("HISTORY_TOKEN_BUDGET", "1000000000"),
        ("MEMORY_TOKEN_BUDGET", "1000000000"),
        ("MEMORY_MAX_ITEMS", "1000000000"),
        ("FILE_CACHE_MB", "1000000000000"),
        ("ANTHROPIC_MAX_TOKENS", "1000000000"),
        ("AGENT_MAX_TOOL_ROUNDS", "100000"),
        ("TURN_DEADLINE_SECONDS", "1e9"),
        ("SHUTDOWN_GRACE_SECONDS", "1e9"),
        ("REMINDERS_MAX_ACTIVE", "1000000"),
        ("CHECK_INS_PER_DAY", "1000000"),
        ("VOICE_MAX_SECONDS", "100000"),
        ("VOICE_MAX_MB", "21"),
    ],
)
def test_every_number_has_an_upper_bound_named_in_one_line(monkeypatch, name, value):
    for required, given in REQUIRED.items():
        monkeypatch.setenv(required, given)
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert str(raised.value).startswith(f"Invalid settings: {name} ")
    assert "less than or equal" in str(raised.value) and "\n" not in str(raised.value)


def test_reads_environment_and_env_file(monkeypatch, tmp_path):
    (tmp_path / ".env").write_text(
        "TELEGRAM_BOT_TOKEN=123:abc\nANTHROPIC_API_KEY=sk-ant-x\nALLOWED_USER_IDS=12, 34\n"
    )
    monkeypatch.setenv("LOG_LEVEL", "debug")
    settings = load_settings()
    assert settings.allowed_user_ids == {12, 34}
    assert settings.log_level == "DEBUG"
    assert settings.database_url == "sqlite+aiosqlite:///./data/bot.db"
    assert "123:abc" not in repr(settings) and "sk-ant-x" not in repr(settings)


def test_default_model_is_newest_listed_sonnet_not_deprecated():
    listed = typing.get_args(typing.get_args(ModelParam)[0])
    sonnets = [m for m in listed if m.startswith("claude-sonnet") and m not in DEPRECATED_MODELS]
    # The SDK lists models newest first.
    assert DEFAULT_MODEL == sonnets[0]


def test_the_file_cache_has_a_folder_and_a_bound(monkeypatch, tmp_path):
    for name, value in REQUIRED.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert (str(settings.file_cache_dir), settings.file_cache_mb) == ("data/files", 200)
    monkeypatch.setenv("FILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FILE_CACHE_MB", "0")
    settings = load_settings()
    assert (settings.file_cache_dir, settings.file_cache_mb) == (tmp_path / "cache", 0)
    monkeypatch.setenv("FILE_CACHE_MB", "-1")
    with pytest.raises(SettingsError, match="FILE_CACHE_MB"):
        load_settings()


def test_replies_stream_unless_turned_off(monkeypatch):
    for name, value in REQUIRED.items():
        monkeypatch.setenv(name, value)
    assert load_settings().stream_replies is True
    monkeypatch.setenv("STREAM_REPLIES", "false")
    assert load_settings().stream_replies is False
    monkeypatch.setenv("STREAM_REPLIES", "sometimes")
    with pytest.raises(SettingsError, match="STREAM_REPLIES"):
        load_settings()


TRANSCRIPTION = {
    "TRANSCRIPTION_BASE_URL": "https://api.groq.com/openai/v1/",
    "TRANSCRIPTION_API_KEY": "gsk-secret-4242",
    "TRANSCRIPTION_MODEL": "whisper-large-v3-turbo",
}


def test_voice_notes_are_off_until_all_three_transcription_settings_are_set(monkeypatch):
    for name, value in {**REQUIRED, "TRANSCRIPTION_MODEL": ""}.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert not settings.transcription_on and settings.transcription_model is None
    assert (settings.voice_max_seconds, settings.voice_max_mb) == (300, 20)
    for name, value in TRANSCRIPTION.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert settings.transcription_on
    assert settings.transcription_base_url == "https://api.groq.com/openai/v1"


def test_half_a_transcription_setup_is_named_without_the_key(monkeypatch):
    for name, value in {**REQUIRED, "TRANSCRIPTION_API_KEY": "gsk-secret-4242"}.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert str(raised.value) == (
        "Invalid settings: voice notes need all of TRANSCRIPTION_BASE_URL, "
        "TRANSCRIPTION_API_KEY, TRANSCRIPTION_MODEL: TRANSCRIPTION_BASE_URL, "
        "TRANSCRIPTION_MODEL not set"
    )
    monkeypatch.setenv("TRANSCRIPTION_BASE_URL", "api.openai.com")
    monkeypatch.setenv("TRANSCRIPTION_MODEL", "whisper-1")
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert "TRANSCRIPTION_BASE_URL must be an http(s) URL" in str(raised.value)
    assert "4242" not in str(raised.value)
