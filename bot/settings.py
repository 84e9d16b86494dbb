"""Settings from the environment or .env, validated once at start-up."""

import re
from pathlib import Path
from typing import Annotated, Any, Self
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from memory.budget import DEFAULT_MEMORY_LIMIT, DEFAULT_TOKEN_BUDGET
from memory.db import DatabaseUrlError, normalize_database_url
from memory.proposals import DEFAULT_MAX_PROPOSALS

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./data/bot.db"
# The newest Sonnet the installed anthropic SDK lists and does not mark deprecated.
DEFAULT_MODEL = "claude-sonnet-5-5"
# Telegram's rule for a webhook secret token.
WEBHOOK_SECRET_RE = re.compile(r"[A-Za-z0-9_-]{1,256}")
# What to do when a required setting is missing or empty, by field name.
ADVICE = {
    "telegram_bot_token": "create a bot with @BotFather and paste its token",
    "anthropic_api_key": "create a key at console.anthropic.com and paste it",
}

# Voice transcription is on when all of these are set (README "Voice notes").
TRANSCRIPTION_FIELDS = ("transcription_base_url", "transcription_api_key", "transcription_model")
# Search by meaning uses this embeddings API instead of the local model when all are set.
EMBEDDINGS_FIELDS = ("embeddings_base_url", "embeddings_api_key", "embeddings_model")


def _public_url(value: str | None, schemes: tuple[str, ...], what: str) -> str | None:
    """Return value stripped if it is an absolute URL of one of schemes, with no query."""
    if value is None:
        return None
    parts = urlsplit(value.strip())
    if parts.scheme not in schemes or not parts.hostname:
        raise ValueError(f"must be {what}")
    if parts.query or parts.fragment:
        raise ValueError("must not have a query or fragment")
    return value.strip()


class Settings(BaseSettings):
    """Everything the bot needs to run; names match the environment variables."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    telegram_bot_token: SecretStr
    anthropic_api_key: SecretStr
    allowed_user_ids: Annotated[frozenset[int], NoDecode] = frozenset()
    database_url: str = DEFAULT_DATABASE_URL
    anthropic_model: str = DEFAULT_MODEL
    anthropic_base_url: str | None = None
    anthropic_max_tokens: int = Field(default=4096, ge=256, le=64_000)
    telegram_api_base_url: str = "https://api.telegram.org/bot"
    # Webhook mode (a host's web process): set WEBHOOK_URL and the bot serves webhooks on
    # WEBHOOK_LISTEN:PORT (8443 when the host sets no PORT) instead of long-polling.
    webhook_url: str | None = None
    webhook_secret: SecretStr | None = None
    webhook_listen: str = "0.0.0.0"
    port: int | None = Field(default=None, ge=1, le=65535)
    # The Mini App (docs/mini-app.md): its public https address; unset, there is no app. In
    # webhook mode it shares the webhook's port; when polling, it listens on MINI_APP_PORT.
    mini_app_url: str | None = None
    mini_app_port: int | None = Field(default=None, ge=1, le=65535)
    mini_app_listen: str = "127.0.0.1"
    log_level: str = "INFO"
    timezone: str = "UTC"
    # Every number has a sane upper bound, so a typo stops start-up instead of a crash later.
    conversation_idle_minutes: int = Field(default=120, ge=1, le=525_600)  # a year
    history_token_budget: int = Field(default=24_000, ge=2_000, le=150_000)
    shutdown_grace_seconds: float = Field(default=20, ge=0, le=600)
    turn_lease_seconds: float = Field(default=30, ge=1, le=3600)
    agent_max_tool_rounds: int = Field(default=8, ge=1, le=50)
    # The longest one answer may wait on the model, all its calls together (a stream kept
    # alive by pings never times out on its own); then the turn stops and the user is told.
    turn_deadline_seconds: float = Field(default=300, ge=1, le=3600)
    # The memory block's room in the system prompt; what does not fit is archived, not lost.
    memory_token_budget: int = Field(default=DEFAULT_TOKEN_BUDGET, ge=300, le=50_000)
    memory_max_items: int = Field(default=DEFAULT_MEMORY_LIMIT, ge=1, le=1_000_000)
    # Memory questions with buttons (propose_memory) the model may ask in one conversation.
    max_memory_proposals: int = Field(default=DEFAULT_MAX_PROPOSALS, ge=0, le=50)
    # Unset keeps every conversation; otherwise conversations quiet this long are deleted.
    conversation_retention_days: int | None = Field(default=None, ge=1, le=36_500)
    # Files users send are fetched again from Telegram when needed; this cache spares that.
    file_cache_dir: Path = Path("./data/files")
    file_cache_mb: int = Field(default=200, ge=0, le=1_000_000)
    # Stream replies into Telegram drafts in private chats while the model writes them.
    stream_replies: bool = True
    # Replies with structure (tables, headings, long lists, math) go as Telegram Rich Messages;
    # off: every reply is HTML as before.
    rich_messages: bool = True
    # Active reminders one owner may have, and check-ins (reminders the model answers) a day.
    reminders_max_active: int = Field(default=50, ge=1, le=1000)
    check_ins_per_day: int = Field(default=3, ge=0, le=50)
    # Voice notes and round videos are transcribed by an OpenAI-compatible server (OpenAI,
    # Groq, a self-hosted one): off until all three are set.
    transcription_base_url: str | None = None
    transcription_api_key: SecretStr | None = None
    transcription_model: str | None = None
    # Conversations are searched by meaning too, with the local model when installed (the
    # embeddings extra) or an OpenAI-compatible embeddings API when all three are set.
    embeddings_base_url: str | None = None
    embeddings_api_key: SecretStr | None = None
    embeddings_model: str | None = None
    # Longer or bigger notes are refused before they are downloaded (Telegram's limit: 20 MB).
    voice_max_seconds: int = Field(default=300, ge=1, le=3600)
    voice_max_mb: int = Field(default=20, ge=1, le=20)
    # Memory tidy passes: a hard cap on one pass's tokens (input and output together), a
    # nightly pass at about 04:00 (off by default), and whether that pass applies unasked.
    tidy_token_cap: int = Field(default=60_000, ge=4_000, le=1_000_000)
    tidy_nightly: bool = False
    tidy_auto_apply: bool = False
    # The API's web tools (web_search, web_fetch): off, or on within uses a turn and an owner's
    # day (searches and page reads together; a search costs $10 per 1,000 on top of tokens).
    web_tools: bool = True
    web_uses_per_turn: int = Field(default=5, ge=1, le=20)
    web_uses_per_day: int = Field(default=50, ge=0, le=10_000)

    @field_validator("telegram_bot_token", "anthropic_api_key", mode="before")
    @classmethod
    def _not_empty(cls, value: object) -> object:
        """Refuse an empty or blank value, as TELEGRAM_BOT_TOKEN= in .env gives."""
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if isinstance(text, str) and not text.strip():
            raise ValueError("is empty")
        return value

    @field_validator("allowed_user_ids", mode="before")
    @classmethod
    def _parse_user_ids(cls, value: object) -> object:
        """Accept a comma-separated list of Telegram user ids."""
        if isinstance(value, str):
            parts = [part.strip() for part in value.split(",") if part.strip()]
            if not all(part.lstrip("-").isdigit() for part in parts):
                raise ValueError("must be comma-separated numeric Telegram user ids")
            return frozenset(int(part) for part in parts)
        if isinstance(value, int):
            return frozenset({value})
        return value

    @field_validator("database_url")
    @classmethod
    def _usable_database_url(cls, value: str) -> str:
        """Require a SQLite or Postgres URL; the error never repeats it (it may hold a password)."""
        try:
            normalize_database_url(value)
        except DatabaseUrlError as error:
            raise ValueError(str(error).removeprefix("DATABASE_URL ")) from None
        return value

    @field_validator(
        "webhook_url",
        "webhook_secret",
        "mini_app_url",
        "mini_app_port",
        "conversation_retention_days",
        *TRANSCRIPTION_FIELDS,
        *EMBEDDINGS_FIELDS,
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """Treat an empty value (WEBHOOK_URL= in .env) as not set."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("webhook_url")
    @classmethod
    def _webhook_url_shape(cls, value: str | None) -> str | None:
        """Require the public http(s) URL Telegram should post updates to."""
        return _public_url(
            value, ("https", "http"), "the bot's public URL, like https://my-bot.example.com"
        )

    @field_validator("mini_app_url")
    @classmethod
    def _mini_app_url_shape(cls, value: str | None) -> str | None:
        """Require the https address Telegram opens the Mini App at (it allows no other)."""
        return _public_url(
            value, ("https",), "the app's public https URL, like https://my-bot.example.com/app"
        )

    @model_validator(mode="after")
    def _mini_app_has_a_port(self) -> Self:
        """Refuse a Mini App with nowhere to listen: polling needs MINI_APP_PORT."""
        if self.mini_app_url and self.webhook_url is None and self.mini_app_port is None:
            raise ValueError(
                "MINI_APP_URL needs MINI_APP_PORT when polling (or WEBHOOK_URL, to share its port)"
            )
        return self

    @field_validator("webhook_secret")
    @classmethod
    def _webhook_secret_charset(cls, value: SecretStr | None) -> SecretStr | None:
        """Require what Telegram accepts as a secret token."""
        if value is not None and not WEBHOOK_SECRET_RE.fullmatch(value.get_secret_value()):
            raise ValueError("must be 1 to 256 characters of A-Z, a-z, 0-9, _ and -")
        return value

    @field_validator("transcription_base_url", "embeddings_base_url")
    @classmethod
    def _transcription_url_shape(cls, value: str | None) -> str | None:
        """Require the http(s) base URL of the API, like https://api.openai.com/v1."""
        if value is None:
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ValueError("must be an http(s) URL, like https://api.openai.com/v1")
        return value.strip().rstrip("/")

    @model_validator(mode="after")
    def _transcription_all_or_nothing(self) -> Self:
        """Refuse transcription or an embeddings API half set up: all three settings, or none."""
        missing = [name.upper() for name in TRANSCRIPTION_FIELDS if getattr(self, name) is None]
        if 0 < len(missing) < len(TRANSCRIPTION_FIELDS):
            raise ValueError(
                f"voice notes need all of {', '.join(n.upper() for n in TRANSCRIPTION_FIELDS)}: "
                f"{', '.join(missing)} not set"
            )
        missing = [name.upper() for name in EMBEDDINGS_FIELDS if getattr(self, name) is None]
        if 0 < len(missing) < len(EMBEDDINGS_FIELDS):
            raise ValueError(
                f"an embeddings API needs all of {', '.join(n.upper() for n in EMBEDDINGS_FIELDS)}"
                f": {', '.join(missing)} not set"
            )
        return self

    @property
    def transcription_on(self) -> bool:
        """Tell whether voice notes are transcribed (all three settings are set)."""
        return self.transcription_base_url is not None

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        """Require an IANA timezone name such as Europe/Berlin."""
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as error:
            raise ValueError(
                f"unknown timezone {value!r} (use a name like Europe/Berlin)"
            ) from error
        return value

    @field_validator("log_level")
    @classmethod
    def _known_log_level(cls, value: str) -> str:
        """Require a standard logging level name."""
        level = value.upper()
        if level not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError("must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
        return level

    @property
    def zone(self) -> ZoneInfo:
        """Return the owner's timezone."""
        return ZoneInfo(self.timezone)


class DatabaseSetting(BaseSettings):
    """DATABASE_URL alone, read as Settings reads it: the environment, then .env, else the default.

    For `alembic upgrade head`, which needs no token or key to migrate.
    """

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    database_url: str = DEFAULT_DATABASE_URL


def configured_database_url() -> str:
    """Return the DATABASE_URL the bot would use, from the environment or .env."""
    return DatabaseSetting().database_url


class SettingsError(Exception):
    """Start-up settings are missing or malformed; the message names each one."""


def describe_settings_error(error: ValidationError) -> str:
    """Return one line naming each bad setting by its environment variable."""
    problems = []
    for detail in error.errors():
        field = str(detail["loc"][0]) if detail["loc"] else ""
        problem = (
            "is not set"
            if detail["type"] == "missing"
            else detail["msg"].removeprefix("Value error, ")
        )
        advice = f": {ADVICE[field]}" if field in ADVICE else ""
        problems.append(f"{field.upper()} {problem}{advice}" if field else problem)
    return "Invalid settings: " + "; ".join(problems)


def load_settings(**overrides: Any) -> Settings:
    """Load settings from the environment and .env, or raise SettingsError."""
    try:
        return Settings(**overrides)
    except ValidationError as error:
        raise SettingsError(describe_settings_error(error)) from None
