"""The handler context type, with the services built at start-up, and whose memory it uses."""

from dataclasses import dataclass, field

from anthropic import AsyncAnthropic
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import Update
from telegram.ext import Application, CallbackContext, ExtBot

from bot.agent.chat import ChatService
from bot.conversations.store import ConversationStore
from bot.reminders.tools import ReminderTools
from bot.settings import Settings
from bot.telegram.drafts import Drafts
from memory.control import MemoryControl
from memory.store import MemoryStore


@dataclass
class Services:
    """Everything handlers call, built once from the settings."""

    settings: Settings
    engine: AsyncEngine
    anthropic: AsyncAnthropic
    chat: ChatService
    conversations: ConversationStore
    memories: MemoryStore
    memory_control: MemoryControl
    reminders: ReminderTools
    # Which chats see drafts; it remembers refusals, so there is one per process.
    drafts: Drafts = field(init=False)

    def __post_init__(self) -> None:
        self.drafts = Drafts(self.settings.stream_replies)


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


def owner_id(update: Update) -> int:
    """Return the memory owner: the user in a private chat, the group in a group."""
    # In a private chat the chat id is the user's id.
    chat = update.effective_chat
    if chat is None:
        # Handlers that need an owner only see updates from chats (messages, buttons).
        raise ValueError("an update without a chat has no memory owner")
    return chat.id
