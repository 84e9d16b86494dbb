"""An OpenAI-compatible server's SDK client, built on first use (the SDK is slow to load)."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openai import AsyncOpenAI


class LazyOpenAI:
    """One AsyncOpenAI client for a server, made when first asked for, closed once."""

    def __init__(self, base_url: str, api_key: str, timeout: float, max_retries: int):
        self._options = (base_url, api_key, timeout, max_retries)
        self._client: AsyncOpenAI | None = None

    def get(self) -> "AsyncOpenAI":
        """Return the client, building it the first time."""
        if self._client is None:
            # Imported here: the SDK takes over a second to load, and most bots never need it.
            from openai import AsyncOpenAI

            base_url, api_key, timeout, max_retries = self._options
            self._client = AsyncOpenAI(
                api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
            )
        return self._client

    async def close(self) -> None:
        """Release the connections, if any were made."""
        if self._client is not None:
            await self._client.close()
