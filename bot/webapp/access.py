"""Who may call the API, how often and how much: initData, rates, sizes and safe headers."""

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from aiohttp import web
from aiohttp.typedefs import Middleware

from bot.webapp.initdata import InitDataError, validate

logger = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
OWNER = web.RequestKey("owner", int)
AUTH_SCHEME = "tma "
# A memory edit is under 1 KB; nothing the app sends needs more.
MAX_BODY_BYTES = 16 * 1024
# The page's only script is its own, plus Telegram's Mini App script; no inline code at all.
CSP = (
    "default-src 'self'; script-src 'self' https://telegram.org; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors https://web.telegram.org"
)
SAFE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
# Remembered callers; the oldest are forgotten past this, so memory stays bounded.
MAX_TRACKED = 10_000


@dataclass
class RateLimit:
    """At most `limit` requests per `window` seconds per key, on an injected monotonic clock."""

    limit: int
    window: float
    clock: Callable[[], float]
    _seen: OrderedDict[object, tuple[float, int]] = field(default_factory=OrderedDict)

    def allow(self, key: object) -> bool:
        """Count one request for key; tell whether it is within the limit."""
        now = self.clock()
        start, count = self._seen.pop(key, (now, 0))
        if now - start >= self.window:
            start, count = now, 0
        self._seen[key] = (start, count + 1)
        while len(self._seen) > MAX_TRACKED:
            self._seen.popitem(last=False)
        return count < self.limit


@dataclass(frozen=True)
class Access:
    """The bot's initData key, the users allowed in, the clock and the rate limits."""

    key: bytes
    allowed: frozenset[int]
    now: Callable[[], datetime]
    per_user: RateLimit
    refused: RateLimit  # failed sign-ins, per address


def _error(status: int, message: str, reason: str | None = None) -> web.Response:
    """Return a JSON error with safe headers; reason is the status line's, for the log."""
    return web.json_response({"error": message}, status=status, reason=reason, headers=SAFE_HEADERS)


def _owner(request: web.Request, access: Access) -> int | web.Response:
    """Return the allowed user the request's initData proves, or the refusal to send."""
    header = request.headers.get("Authorization", "")
    if not header.startswith(AUTH_SCHEME):
        return _error(401, "sign-in required")
    try:
        user = validate(header.removeprefix(AUTH_SCHEME), access.key, access.now())
    except InitDataError as error:
        # The reason only, never the initData: it and its hash are bearer secrets.
        return _error(401, "sign-in refused", str(error))
    if user.id not in access.allowed:
        return _error(403, "not allowed")
    return user.id


def guard(access: Access) -> Middleware:
    """Return middleware that signs each API request in and bounds its rate and size."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.method == "POST" and (request.content_length or 0) > MAX_BODY_BYTES:
            return _error(413, "request too large")
        if request.method == "POST" and request.content_length is None and request.body_exists:
            return _error(411, "length required")
        owner = _owner(request, access)
        if isinstance(owner, web.Response):
            # Past the limit a failure is answered without a log line. A signed-in user is
            # never refused for a stranger's failures, even behind the same proxy.
            if not access.refused.allow(request.remote):
                return _error(429, "too many requests")
            logger.info("mini app sign-in refused: %s", owner.reason)
            return owner
        if not access.per_user.allow(owner):
            return _error(429, "too many requests")
        request[OWNER] = owner
        response = await handler(request)
        response.headers.update(SAFE_HEADERS)
        return response

    return middleware
