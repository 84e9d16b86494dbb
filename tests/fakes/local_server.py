"""What the fake servers share: an aiohttp app on an ephemeral port of 127.0.0.1."""

from typing import Self

from aiohttp import web


class LocalServer:
    """A server on 127.0.0.1 that a test starts and stops, or uses with `async with`."""

    # aiohttp's own default; a server that must see bigger requests raises it.
    max_request_bytes = 1024 * 1024

    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self._port = 0

    def add_routes(self, app: web.Application) -> None:
        """Add this server's routes to its app."""
        raise NotImplementedError

    async def start(self) -> Self:
        """Start serving on an ephemeral port."""
        app = web.Application(client_max_size=self.max_request_bytes)
        self.add_routes(app)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        """Shut the server down."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @property
    def origin(self) -> str:
        """Return the server's scheme, host and port."""
        return f"http://127.0.0.1:{self._port}"
