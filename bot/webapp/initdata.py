"""Telegram's signed initData: check its signature and age, and read the user it proves."""

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import parse_qsl

# Telegram's documented derivation: secret = HMAC-SHA256(key="WebAppData", msg=bot_token).
WEB_APP_KEY = b"WebAppData"
# A signed initData is reused by every request of one opened app: it is a bearer token, so
# its age bounds how long a copy of it can be replayed.
MAX_AGE = timedelta(hours=1)
# A clock a little ahead of ours is not an attack.
CLOCK_SKEW = timedelta(minutes=1)
MAX_INIT_DATA_BYTES = 4096
MAX_FIELDS = 32


class InitDataError(Exception):
    """The initData is not one Telegram signed for this bot lately; the message says why."""


@dataclass(frozen=True)
class WebAppUser:
    """The Telegram user an initData proves."""

    id: int
    auth_date: datetime


def secret_key(bot_token: str) -> bytes:
    """Return the key that signs this bot's initData."""
    return hmac.new(WEB_APP_KEY, bot_token.encode(), hashlib.sha256).digest()


def data_check_string(fields: dict[str, str]) -> str:
    """Return the text Telegram signs: every field but the hash, sorted, one per line."""
    return "\n".join(f"{key}={fields[key]}" for key in sorted(fields) if key != "hash")


def sign(fields: dict[str, str], key: bytes) -> str:
    """Return the hex signature of initData's fields under the bot's key."""
    return hmac.new(key, data_check_string(fields).encode(), hashlib.sha256).hexdigest()


def _fields(raw: str) -> dict[str, str]:
    """Parse initData's query string, refusing oversized or repeated fields."""
    if len(raw.encode()) > MAX_INIT_DATA_BYTES:
        raise InitDataError("initData too long")
    try:
        pairs = parse_qsl(
            raw, keep_blank_values=True, strict_parsing=True, max_num_fields=MAX_FIELDS
        )
    except ValueError:
        raise InitDataError("initData malformed") from None
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise InitDataError("initData repeats a field")
    return fields


def _user_id(fields: dict[str, str]) -> int:
    """Read the user's id from the signed user field."""
    try:
        user = json.loads(fields.get("user", ""))
    except ValueError:
        raise InitDataError("initData has no user") from None
    user_id = user.get("id") if isinstance(user, dict) else None
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        raise InitDataError("initData has no user")
    return user_id


def validate(raw: str, key: bytes, now: datetime) -> WebAppUser:
    """Return the user a fresh initData signed with key proves, or raise InitDataError."""
    fields = _fields(raw)
    given = fields.get("hash", "")
    if not hmac.compare_digest(sign(fields, key).encode(), given.encode()):
        raise InitDataError("initData signature does not match")
    try:
        signed_at = datetime.fromtimestamp(int(fields.get("auth_date", "")), now.tzinfo)
    except (ValueError, OverflowError, OSError):
        raise InitDataError("initData has no auth_date") from None
    if signed_at > now + CLOCK_SKEW or now - signed_at > MAX_AGE:
        raise InitDataError("initData expired")
    return WebAppUser(_user_id(fields), signed_at)
