"""Settings from the environment or .env, validated once at start-up."""

from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./data/bot.db"
# The newest Sonnet the installed anthropic SDK lists and does not mark deprecated.
DEFAULT_MODEL = "claude-sonnet-5-5"


class Settings(BaseSettings):
    """Everything the bot needs to run; names match the environment variables."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    telegram_bot_token: SecretStr = Field(min_length=1)
    anthropic_api_key: SecretStr = Field(min_length=1)
    allowed_user_ids: Annotated[frozenset[int], NoDecode] = frozenset()
    database_url: str = DEFAULT_DATABASE_URL
    anthropic_model: str = DEFAULT_MODEL
    anthropic_base_url: str | None = None
    anthropic_max_tokens: int = Field(default=4096, ge=256, le=64_000)
    telegram_api_base_url: str = "https://api.telegram.org/bot"
    log_level: str = "INFO"
    timezone: str = Field(default="UTC", validation_alias=AliasChoices("TIMEZONE", "BOT_TIMEZONE"))
    conversation_idle_minutes: int = Field(default=120, ge=1)
    agent_max_tool_rounds: int = Field(default=8, ge=1, le=50)

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


class SettingsError(Exception):
    """Start-up settings are missing or malformed; the message names each one."""


def describe_settings_error(error: ValidationError) -> str:
    """Return one line naming each bad setting by its environment variable."""
    problems = []
    for detail in error.errors():
        name = str(detail["loc"][0]).upper() if detail["loc"] else "settings"
        problem = (
            "is not set"
            if detail["type"] == "missing"
            else detail["msg"].removeprefix("Value error, ")
        )
        problems.append(f"{name} {problem}")
    return "Invalid settings: " + "; ".join(problems)


def load_settings(**overrides) -> Settings:
    """Load settings from the environment and .env, or raise SettingsError."""
    try:
        return Settings(**overrides)
    except ValidationError as error:
        raise SettingsError(describe_settings_error(error)) from None
