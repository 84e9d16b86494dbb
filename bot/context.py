"""The handler context type, with the services built at start-up."""

from dataclasses import dataclass

from anthropic import AsyncAnthropic
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram.ext import Application, CallbackContext, ExtBot

from bot.chat import ChatService
from bot.memory_control import MemoryControl
from bot.settings import Settings


@dataclass
class Services:
    """Everything handlers call, built once from the settings."""

    settings: Settings
    engine: AsyncEngine
    anthropic: AsyncAnthropic
    chat: ChatService
    memory_control: MemoryControl


class BotContext(CallbackContext[ExtBot, dict, dict, dict]):
    """CallbackContext with typed access to the services."""

    def __init__(
        self, application: Application, chat_id: int | None = None, user_id: int | None = None
    ):
        super().__init__(application, chat_id, user_id)

    @property
    def services(self) -> Services:
        """Return the services built at start-up."""
        return self.application.bot_data["services"]
