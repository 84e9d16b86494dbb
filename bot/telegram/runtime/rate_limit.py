"""Telegram's rate limits, applied so that typing indicators and drafts never hold back a reply."""

from collections.abc import Callable, Coroutine
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import AIORateLimiter

from bot.telegram.native import DRAFT_ENDPOINTS

CHAT_ACTION_ENDPOINT = "sendChatAction"
# A draft goes out only while the overall budget is at most this full, leaving the rest to replies.
DRAFT_SHARE = 0.5
# What a draft that found no room is told: try again after a second.
NO_ROOM_SECONDS = 1


class ReplyFirstRateLimiter(AIORateLimiter):
    """AIORateLimiter whose queue carries messages only; chat actions and drafts skip it.

    A typing action is cosmetic: queued behind a burst of replies it would arrive after its
    reply, and queued ahead of them it would delay real messages. If Telegram refuses one,
    the caller drops it and the next refresh tries again. A draft is a preview: it takes a
    share of the overall budget when that is free, and otherwise is refused at once with
    RetryAfter, as Telegram would, rather than queue.
    """

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | dict[str, Any] | list[dict[str, Any]]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> bool | dict[str, Any] | list[dict[str, Any]]:
        """Send chat actions at once, drafts if there is room; queue the rest as AIORateLimiter."""
        if endpoint == CHAT_ACTION_ENDPOINT:
            return await callback(*args, **kwargs)
        if endpoint in DRAFT_ENDPOINTS:
            await self._take_room_for_draft()
            return await callback(*args, **kwargs)
        return await super().process_request(
            callback, args, kwargs, endpoint, data, rate_limit_args
        )

    async def _take_room_for_draft(self) -> None:
        """Count a draft against the overall budget, or raise RetryAfter if replies need it."""
        # AIORateLimiter's own limiter and pause (PTB is pinned below 23; tests cover both).
        if not self._retry_after_event.is_set():
            raise RetryAfter(NO_ROOM_SECONDS)  # Telegram said wait; replies go first after
        limiter = self._base_limiter
        if limiter is None:
            return
        if not limiter.has_capacity(limiter.max_rate * DRAFT_SHARE):
            raise RetryAfter(NO_ROOM_SECONDS)
        await limiter.acquire()  # there is room, so this returns at once
