"""The fake servers with clocks on them: when an update leaves, a request lands, a reply goes."""

import time
from collections.abc import Callable, Iterable
from typing import Any

from aiohttp import web

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.telegram_server import FakeTelegram

SENDS = ("sendMessage", "sendRichMessage")
DRAFTS = ("sendMessageDraft", "sendRichMessageDraft")


def _stamped(
    handler: Callable[[dict[str, Any]], Any], stamp: Callable[[dict[str, Any], float], None]
) -> Callable[[dict[str, Any]], Any]:
    """Return handler, stamping each call it accepts with when it arrived."""

    def stamped(params: dict[str, Any]) -> Any:
        arrived = time.perf_counter()
        result = handler(params)
        stamp(params, arrived)
        return result

    return stamped


class TimedTelegram(FakeTelegram):
    """FakeTelegram that stamps each update as getUpdates hands it out, each message and draft."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.first_get_updates: float | None = None
        self.update_out: dict[int, float] = {}  # update_id -> when getUpdates returned it
        self.sends: list[tuple[Any, float]] = []  # (chat_id, when a message arrived, plain or rich)
        self.draft_times: list[tuple[Any, float]] = []  # (chat_id, when a draft arrived)
        self._sends_by_chat: dict[Any, list[float]] = {}
        # A reply with structure goes as a Rich Message (RICH_MESSAGES): plain or rich, each
        # message and each draft is stamped as it arrives, once the fake has accepted it.
        for names, stamp in ((SENDS, self._sent), (DRAFTS, self._drafted)):
            for name in names:
                given, handler = self._methods[name.lower()]
                self._methods[name.lower()] = (given, _stamped(handler, stamp))

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.first_get_updates is None:
            self.first_get_updates = time.perf_counter()
        updates = await super()._get_updates(params)
        now = time.perf_counter()
        for update in updates:
            # An update is handed out again until an offset confirms it; the first time counts.
            self.update_out.setdefault(update["update_id"], now)
        return updates

    def _sent(self, params: dict[str, Any], arrived: float) -> None:
        """Stamp a message that reached its chat."""
        chat_id = params.get("chat_id")
        self.sends.append((chat_id, arrived))
        self._sends_by_chat.setdefault(chat_id, []).append(arrived)

    def _drafted(self, params: dict[str, Any], arrived: float) -> None:
        """Stamp a draft shown in its chat."""
        self.draft_times.append((params.get("chat_id"), arrived))

    def sends_to(self, chat_id: Any) -> list[float]:
        """Return when each message (sendMessage or sendRichMessage) to chat_id arrived."""
        return self._sends_by_chat.get(chat_id, [])

    async def wait_for_sends(
        self,
        chat_ids: Iterable[Any],
        total: int,
        timeout: float = 30.0,  # noqa: ASYNC109
    ) -> None:
        """Wait until the chats together got `total` messages; cheap to re-check on every call."""
        lists = [self._sends_by_chat.setdefault(chat_id, []) for chat_id in set(chat_ids)]
        if not await self._wait_until(lambda: sum(map(len, lists)) >= total, timeout):
            raise AssertionError(
                f"expected {total} messages within {timeout}s, got {sum(map(len, lists))}; "
                f"rejected: {self.rejected[-3:]}"
            )


class TimedAnthropic(FakeAnthropic):
    """FakeAnthropic that stamps each request's arrival and its answer, and keeps the usage."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.timings: list[tuple[float, float]] = []  # (request fully read, answer ready)
        self.body_sizes: list[int] = []  # bytes of each request body, in arrival order
        # In arrival order; benchmarks that read them send one request at a time.
        self.usages: list[dict[str, Any]] = []

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        # Read the body first so "arrived" means the whole request is here.
        self.body_sizes.append(len(await request.read()))
        arrived = time.perf_counter()
        response = await super()._messages(request)
        self.timings.append((arrived, time.perf_counter()))
        return response

    def usage(self, request: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, Any]:
        """Return the usage block and keep it for the benchmark."""
        usage = super().usage(request, content)
        self.usages.append(usage)
        return usage
