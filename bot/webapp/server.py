"""The Mini App's web application: its page, and its API behind sign-in, mounted on a server."""

import json
from collections.abc import Awaitable, Callable
from importlib.resources import files
from urllib.parse import urlsplit

from aiohttp import web

from bot.reminders.records import ReminderNotFound
from bot.reminders.timing import TimingError
from bot.webapp import memories_api, more_api
from bot.webapp.access import SAFE_HEADERS, Access, Handler, guard
from bot.webapp.list_cache import ListCache
from bot.webapp.services import LIST_CACHE, SERVICES, AppServices
from memory.batches.values import BatchDecided, BatchNotFound, BatchStale, BatchTooBig
from memory.items import (
    AlreadyUndone,
    CannotUndo,
    ChangeNotFound,
    MemoryAtLimit,
    MemoryNotDeleted,
    MemoryNotFound,
)

# Where the app is served when MINI_APP_URL has no path of its own.
DEFAULT_PATH = "app"
STATIC = {
    "": ("index.html", "text/html"),
    "app.js": ("app.js", "text/javascript"),
    "style.css": ("style.css", "text/css"),
}
# Another owner's id is "not found", exactly like an id nobody has.
NOT_FOUND = (MemoryNotFound, ChangeNotFound, BatchNotFound, ReminderNotFound)
REFUSED: dict[type[Exception], str] = {
    AlreadyUndone: "already undone",
    CannotUndo: "the memory changed since, so this cannot be undone",
    MemoryNotDeleted: "that memory is not deleted",
    MemoryAtLimit: "memory is full: delete one first",
    BatchDecided: "that batch was already undone",
    BatchStale: "memories changed since",
    BatchTooBig: "memory is full",
    TimingError: "that reminder's repeat rule cannot be worked out",
}
REFUSALS = tuple(REFUSED)


def mini_app_endpoint(mini_app_url: str) -> tuple[str, str]:
    """Return the path to serve the app at, and the URL its button opens (ending in /)."""
    path = urlsplit(mini_app_url).path.strip("/")
    if path:
        return f"/{path}", mini_app_url.rstrip("/") + "/"
    return f"/{DEFAULT_PATH}", f"{mini_app_url.rstrip('/')}/{DEFAULT_PATH}/"


def _json_error(status: int, message: str) -> web.Response:
    """Return a JSON error."""
    return web.Response(
        text=json.dumps({"error": message}), status=status, content_type="application/json"
    )


@web.middleware
async def refusals(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Answer the services' refusals as 404 (not yours, or nobody's) or 409 (not now)."""
    try:
        return await handler(request)
    except NOT_FOUND:
        return _json_error(404, "not found")
    except REFUSALS as refusal:
        return _json_error(409, REFUSED[type(refusal)])


def _static_handler(
    name: str, content_type: str
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """Return a handler serving one of the page's files, read once, with the safe headers."""
    body = files("bot.webapp").joinpath("static", name).read_bytes()

    async def serve(request: web.Request) -> web.Response:
        return web.Response(
            body=body, content_type=content_type, charset="utf-8", headers=SAFE_HEADERS
        )

    return serve


def mini_app(services: AppServices, access: Access) -> web.Application:
    """Return the app: its page at /, its API under /api/ behind sign-in."""
    page = web.Application()
    for route, (name, content_type) in STATIC.items():
        page.router.add_get(f"/{route}", _static_handler(name, content_type))
    api = web.Application(middlewares=[guard(access), refusals])
    api[SERVICES] = services
    api[LIST_CACHE] = ListCache()
    api.add_routes(memories_api.routes)
    api.add_routes(more_api.routes)
    page.add_subapp("/api", api)
    return page


def mount(root: web.Application, path: str, app: web.Application) -> None:
    """Serve the app under path on root; the bare path redirects to the page."""

    async def to_page(request: web.Request) -> web.Response:
        raise web.HTTPPermanentRedirect(f"{path}/")

    root.router.add_get(path, to_page)
    root.add_subapp(path, app)
