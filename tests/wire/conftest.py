"""The fake servers, and the real clients that talk to them, for the wire-format tests."""

import anthropic
import pytest
from telegram import Bot

from bot.app import file_base_url
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.telegram_server import FakeTelegram


@pytest.fixture
async def tg():
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def bot(tg):
    # The file URL is derived exactly as the product derives it from the API URL.
    async with Bot(tg.token, base_url=tg.base_url, base_file_url=file_base_url(tg.base_url)) as b:
        yield b


@pytest.fixture
async def fa():
    async with FakeAnthropic() as server:
        yield server


@pytest.fixture
async def claude(fa):
    async with anthropic.AsyncAnthropic(
        api_key=fa.api_key, base_url=fa.base_url, max_retries=0
    ) as client:
        yield client
