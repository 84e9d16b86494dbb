"""Figure 19: the Mini App: first view of 1,000 memories in Chromium, and the API's p99.

Each figure beside its reference, measured in the same run on the same machine: for the API,
a bare aiohttp server on loopback answering the same list's bytes (no sign-in, no database);
for the first view, a static page holding the same 1,000 rows as HTML with the app's styles
(no script, no API call). What the app adds is the difference.
"""

import gzip
import html
import shutil
import time
from collections.abc import Awaitable, Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer

from memory.db import create_engine, create_sessionmaker
from tests.perf.botrun import database, postgres_available
from tests.perf.common import Config, Row, command, ms, percentile
from tests.perf.seeding import seed_memories
from tests.webapp.support import OWNER, App, auth, init_data, running_app

MEMORIES = 1000
FIRST_VIEW_TARGET = 0.300
API_TARGET = 0.050
ENDPOINTS = ("memories", "search?q=dentist", "reminders", "batches")
CHANGED = "memories after a change"  # each call after an untimed pin or unpin
REFERENCE = "reference: the same bytes from a bare aiohttp handler"
TELEGRAM_JS = "https://telegram.org/js/telegram-web-app.js"
GZIP = {"Accept-Encoding": "gzip"}


async def _times(
    url: str, headers: dict[str, str], before: Callable[[], Awaitable[Any]], calls: int
) -> list[float]:
    """Time sequential GETs of url over loopback, each after an untimed before()."""
    times = []
    async with aiohttp.ClientSession() as session:
        for _ in range(calls):
            await before()
            started = time.perf_counter()
            async with session.get(url, headers=headers) as response:
                await response.read()
                assert response.status == 200, url
            times.append(time.perf_counter() - started)
    return times


async def _nothing() -> None:
    return None


async def _api(app: App, calls: int) -> dict[str, list[float]]:
    """Time each endpoint, and the list after each of its owner's changes (not kept)."""
    headers = {**auth(OWNER), **GZIP}
    timed = {
        path: await _times(f"{app.url}/api/{path}", headers, _nothing, calls) for path in ENDPOINTS
    }
    [first, *_] = await app.store.list_active(OWNER)
    flips = iter(range(calls))

    async def change() -> None:
        await app.store.pin(OWNER, first.id, next(flips) % 2 == 0)

    timed[CHANGED] = await _times(f"{app.url}/api/memories", headers, change, calls)
    return timed


def _reference_page(listing: dict[str, Any]) -> bytes:
    """Return a static page showing the list's rows as the app does, with its styles."""
    rows = "".join(
        f'<li class="item" data-id="{m["id"]}"><span class="content">{html.escape(m["content"])}'
        f'</span><div class="meta">{m["category"]} · {m["updated_at"][:10]}</div></li>'
        for m in listing["memories"]
    )
    return (
        '<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="style.css">'
        f'</head><body><main id="view"><div id="sections"><ul class="list">{rows}</ul></div>'
        "</main></body></html>"
    ).encode()


async def _reference(app: App, calls: int) -> tuple[TestServer, list[float]]:
    """Serve the reference (the list's bytes, the static page); time the bare list calls."""
    async with app.session.get(f"{app.url}/api/memories", headers=auth(OWNER)) as response:
        body = await response.read()
        listing = await response.json()
    gzipped, page = gzip.compress(body, 6, mtime=0), _reference_page(listing)
    style = files("bot.webapp").joinpath("static", "style.css").read_bytes()

    async def bare(request: web.Request) -> web.Response:
        headers = {"Content-Encoding": "gzip"}
        return web.Response(body=gzipped, content_type="application/json", headers=headers)

    async def static(request: web.Request) -> web.Response:
        return web.Response(body=page, content_type="text/html", charset="utf-8")

    async def styles(request: web.Request) -> web.Response:
        return web.Response(body=style, content_type="text/css", charset="utf-8")

    root = web.Application()
    root.router.add_get("/list", bare)
    root.router.add_get("/page/", static)
    root.router.add_get("/page/style.css", styles)
    server = TestServer(root, host="127.0.0.1")
    await server.start_server()
    return server, await _times(str(server.make_url("/list")), GZIP, _nothing, calls)


async def _first_views(urls: list[str], runs: int) -> list[list[float]]:
    """Return, per URL, per run, the seconds from navigation start to 1,000 memories shown."""
    from playwright.async_api import async_playwright

    from tests.webapp.test_browser import fragment, stand_in

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    signed = init_data(OWNER)
    script = stand_in(signed)
    views: list[list[float]] = [[] for _ in urls]
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for run in range(runs + 1):  # the first warms the browser's caches up, and is dropped
            for index, url in enumerate(urls):  # interleaved: the same load for both
                page = await browser.new_page()
                await page.route(
                    TELEGRAM_JS, lambda r: r.fulfill(body=script, content_type="text/javascript")
                )
                # As Telegram opens a Mini App: the initData in the fragment, and in its script.
                await page.goto(url + fragment(signed))
                # The page's own clock at the first frame showing them all, not after a round
                # trip back to Playwright's driver (100 ms and more on a loaded machine).
                shown = await page.wait_for_function(
                    f"() => document.querySelectorAll('#sections .item').length === {MEMORIES}"
                    " && performance.now()",
                    polling="raf",
                )
                if run:
                    views[index].append(await shown.json_value() / 1000)
                await page.close()
        await browser.close()
    return views


def _view_rows(name: str, views: list[float], reference: list[float]) -> list[Row]:
    """Return the first view's row and its reference's."""
    p50, ref = percentile(views, 50), percentile(reference, 50)
    return [
        Row(
            key="miniapp",
            figure=f"19. Mini App first view of {MEMORIES:,} memories in Chromium, p50: {name}",
            value=f"{ms(p50)} (reference, a static page of the rows: {ms(ref)})",
            numbers=(p50 * 1000, ref * 1000), target="< 300 ms",
            met=p50 < FIRST_VIEW_TARGET, command=command("miniapp"),
        ),
    ]  # fmt: skip


def _api_row(name: str, path: str, times: list[float], target: bool = True) -> Row:
    """Return an endpoint's p50 / p99 row."""
    p50, p99 = percentile(times, 50), percentile(times, 99)
    return Row(
        key="miniapp",
        figure=f"19. Mini App API GET {path.split('?')[0]} p50 / p99, {MEMORIES:,} memories:"
        f" {name}",
        value=f"{ms(p50)} / {ms(p99)}", numbers=(p50 * 1000, p99 * 1000),
        target="p99 < 50 ms" if target else "",
        met=p99 < API_TARGET if target else None, command=command("miniapp"),
    )  # fmt: skip


async def _measure(app: App, backend: str, config: Config) -> list[Row]:
    """Time the API and its reference; on SQLite the first view and its reference too."""
    name = "SQLite" if backend == "sqlite" else "Postgres"
    api = await _api(app, config.miniapp_calls)
    server, bare = await _reference(app, config.miniapp_calls)
    try:
        rows = [_api_row(name, path, times) for path, times in api.items()]
        rows.append(_api_row(name, REFERENCE, bare, target=False))
        if backend == "sqlite":
            urls = [f"{app.url}/", str(server.make_url("/page/"))]
            views, reference = await _first_views(urls, config.miniapp_views)
            rows = _view_rows(name, views, reference) + rows
    finally:
        await server.close()
    return rows


async def run(config: Config, workdir: Path) -> list[Row]:
    """Seed 1,000 memories per backend; time the API, and the first view on SQLite."""
    rows: list[Row] = []
    for backend in config.backends:
        if backend == "postgres" and not await postgres_available(config.postgres_url):
            continue
        async with database(backend, workdir, config.postgres_url) as url:
            await seed_memories(url, OWNER, MEMORIES)
            engine = create_engine(url)
            try:
                async with running_app(create_sessionmaker(engine), per_user=10**6) as app:
                    rows += await _measure(app, backend, config)
            finally:
                await engine.dispose()
    return rows
