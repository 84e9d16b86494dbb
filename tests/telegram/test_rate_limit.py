"""Replies queue for Telegram's rate limit; typing actions and drafts do not wait behind them."""

import asyncio
from typing import Any

import pytest
from telegram.error import RetryAfter
from telegram.ext import AIORateLimiter, ExtBot

from bot.telegram.runtime.rate_limit import ReplyFirstRateLimiter
from tests.fakes.telegram_server import FakeTelegram

BURST = 6


class PauseSignalling(ReplyFirstRateLimiter):
    """The limiter under test, which also says when Telegram's RetryAfter has reached it."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.told_to_wait = asyncio.Event()

    async def process_request(self, callback, args, kwargs, endpoint, data, rate_limit_args):
        """Process the request as ReplyFirstRateLimiter does, noting a RetryAfter on the way."""

        async def noting(*call_args: Any, **call_kwargs: Any) -> Any:
            try:
                return await callback(*call_args, **call_kwargs)
            except RetryAfter:
                # AIORateLimiter pauses as this propagates, before any other task runs.
                self.told_to_wait.set()
                raise

        return await super().process_request(noting, args, kwargs, endpoint, data, rate_limit_args)


async def sent_before_chat_action(limiter: AIORateLimiter) -> int:
    """Queue a burst of replies, send one typing action, and count replies out before it."""
    async with FakeTelegram() as tg:
        async with ExtBot(tg.token, base_url=tg.base_url, rate_limiter=limiter) as bot:
            replies = [
                asyncio.create_task(bot.send_message(100 + i, "reply")) for i in range(BURST)
            ]
            # The first reply reached Telegram: every task of the burst has entered the limiter.
            await tg.wait_for_call("sendMessage")
            await bot.send_chat_action(99, "typing")
            delivered = len(tg.sent)
            await asyncio.gather(*replies)
            assert len(tg.sent) == BURST and len(tg.chat_actions) == 1
            return delivered


async def test_a_typing_action_does_not_wait_behind_queued_replies():
    # Two calls a second: the burst takes about two and a half seconds to go out.
    limiter = ReplyFirstRateLimiter(overall_max_rate=2, overall_time_period=1)
    assert await sent_before_chat_action(limiter) < BURST


async def test_plain_aioratelimiter_would_queue_it_behind_them():
    limiter = AIORateLimiter(overall_max_rate=2, overall_time_period=1)
    assert await sent_before_chat_action(limiter) == BURST


async def test_a_draft_takes_spare_room_and_is_refused_rather_than_queued():
    limiter = ReplyFirstRateLimiter(overall_max_rate=4, overall_time_period=1)
    async with FakeTelegram() as tg:
        async with ExtBot(tg.token, base_url=tg.base_url, rate_limiter=limiter) as bot:
            assert await bot.send_message_draft(100, 1, "a draft") is True
            replies = [asyncio.create_task(bot.send_message(100, "reply")) for _ in range(BURST)]
            await tg.wait_for_call("sendMessage")  # the burst filled the budget; some wait
            with pytest.raises(RetryAfter):
                await bot.send_message_draft(100, 1, "a draft that would delay them")
            await asyncio.gather(*replies)
            assert len(tg.drafts) == 1 and len(tg.sent) == BURST


async def test_no_draft_goes_out_while_telegram_asks_to_wait():
    limiter = PauseSignalling(max_retries=1)
    async with FakeTelegram() as tg:
        async with ExtBot(tg.token, base_url=tg.base_url, rate_limiter=limiter) as bot:
            tg.fail_next("sendMessage", status=429, retry_after=1)
            reply = asyncio.create_task(bot.send_message(100, "reply"))
            await limiter.told_to_wait.wait()
            with pytest.raises(RetryAfter):
                await bot.send_message_draft(100, 1, "a draft")
            await reply
            assert await bot.send_message_draft(100, 1, "a draft") is True
            assert len(tg.drafts) == 1 and len(tg.sent) == 1
