"""Telegram's rate limits, applied so that a typing indicator never holds back a reply."""

from collections.abc import Callable, Coroutine
from typing import Any

from telegram.ext import AIORateLimiter

CHAT_ACTION_ENDPOINT = "sendChatAction"


class ReplyFirstRateLimiter(AIORateLimiter):
    """AIORateLimiter whose queue carries messages only; chat actions go straight out.

    A typing action is cosmetic: queued behind a burst of replies it would arrive after its
    reply, and queued ahead of them it would delay real messages. If Telegram refuses one,
    the caller drops it and the next refresh tries again.
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
        """Send chat actions at once; queue everything else as AIORateLimiter does."""
        if endpoint == CHAT_ACTION_ENDPOINT:
            return await callback(*args, **kwargs)
        return await super().process_request(
            callback, args, kwargs, endpoint, data, rate_limit_args
        )
