"""PTB's Updater with the webhook served by our aiohttp server, beside the Mini App.

PTB's own webhook server (tornado) takes no routes of its own, and the Mini App must share
the webhook's port: so in webhook mode this server receives the updates and feeds
update_queue, as PTB's docs show for a custom server. aiohttp because it is asyncio-native,
well kept, and its server, client and test tools are one package. When polling, PTB fetches
updates as before and the app gets a listener of its own on MINI_APP_PORT.
"""

import asyncio
import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from telegram import Bot, Update
from telegram.ext import Updater

from bot.webapp.server import mount

logger = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
# Telegram's updates are far smaller; anything bigger is not from Telegram.
MAX_UPDATE_BYTES = 1024 * 1024


class AppSite:
    """Where the Mini App is served: its path, its app, and the listener when polling."""

    def __init__(self, path: str, app: web.Application, listen: str, port: int | None):
        self.path, self.app, self.listen, self.port = path, app, listen, port


class WebServerUpdater(Updater):
    """Updates by webhook on our server (with the Mini App beside it), or by polling."""

    def __init__(self, bot: Bot, update_queue: "asyncio.Queue[object]", site: AppSite | None):
        super().__init__(bot, update_queue)
        self._site = site
        self._runner: web.AppRunner | None = None

    @property
    def running(self) -> bool:
        """Tell whether updates are being received, by our server or by polling."""
        return self._runner is not None or super().running

    async def start_webhook(  # type: ignore[override]
        self,
        listen: str,
        port: int,
        url_path: str = "",
        *,
        webhook_url: str,
        allowed_updates: list[str] | None = None,
        secret_token: str | None = None,
        max_connections: int = 40,
        drop_pending_updates: bool | None = None,
        **_: object,
    ) -> "asyncio.Queue[object]":
        """Serve the webhook (and the app) on listen:port, then register it with Telegram."""
        root = web.Application(client_max_size=MAX_UPDATE_BYTES)
        root.router.add_post(f"/{url_path.strip('/')}", self._receiver(secret_token))
        if self._site is not None:
            mount(root, self._site.path, self._site.app)
        await self._serve(root, listen, port)
        await self.bot.set_webhook(
            url=webhook_url,
            allowed_updates=allowed_updates,
            secret_token=secret_token,
            max_connections=max_connections,
            drop_pending_updates=drop_pending_updates,
        )
        return self.update_queue

    async def start_polling(self, *args: Any, **kwargs: Any) -> "asyncio.Queue[object]":
        """Poll Telegram as PTB does, and serve the app on its own port if it has one."""
        queue = await super().start_polling(*args, **kwargs)
        site = self._site
        if site is not None and site.port is not None:
            root = web.Application()
            mount(root, site.path, site.app)
            await self._serve(root, site.listen, site.port)
            logger.info("serving the Mini App on %s:%s%s/", site.listen, site.port, site.path)
        return queue

    async def stop(self) -> None:
        """Stop receiving: close our server first, then PTB's polling."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
        if super().running:
            await super().stop()

    async def _serve(self, root: web.Application, listen: str, port: int) -> None:
        """Start serving root on listen:port."""
        runner = web.AppRunner(root, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, listen, port).start()
        self._runner = runner

    def _receiver(self, secret: str | None) -> Callable[[web.Request], Awaitable[web.Response]]:
        """Return the handler that checks Telegram's secret and queues each update."""
        expected = (secret or "").encode()

        async def receive(request: web.Request) -> web.Response:
            given = request.headers.get(SECRET_HEADER, "").encode()
            if secret and not hmac.compare_digest(given, expected):
                return web.Response(status=403, text="wrong or missing secret token")
            if request.content_type != "application/json":
                return web.Response(status=403, text="JSON only")
            try:
                data = json.loads(await request.read())
                if not isinstance(data, dict):
                    raise TypeError("an update is a JSON object")
                # PTB's parser raises whichever of these a malformed field leads it to.
                update = Update.de_json(data, self.bot)
            except (ValueError, TypeError, KeyError, AttributeError):
                logger.warning("a webhook request's body was not an update; ignored")
                return web.Response(status=400, text="not an update")
            await self.update_queue.put(update)
            return web.Response(text="ok")

        return receive
