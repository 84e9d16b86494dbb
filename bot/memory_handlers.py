"""Handlers of the /memory command family: the user's direct control of memory."""

from telegram import Update
from telegram.ext import Application, CommandHandler

from bot import texts
from bot.context import BotContext
from bot.owners import owner_id
from bot.replies import send_html
from memory.store import MemoryNotFound
from memory.tools import MemoryChange


async def memory_command(update: Update, context: BotContext) -> None:
    """List memories, or delete one: /memory [list | delete <id>]."""
    chat_id = update.effective_chat.id
    args = [arg.lower() if i == 0 else arg for i, arg in enumerate(context.args or [])]
    control = context.services.memory_control
    if args in ([], ["list"]):
        items = await control.list(owner_id(update))
        await send_html(context.bot, chat_id, texts.memory_list(items))
    elif args[0] == "delete" and len(args) == 2:
        try:
            item = await control.delete(owner_id(update), args[1])
        except MemoryNotFound:
            await send_html(context.bot, chat_id, texts.unknown_memory(args[1]))
        else:
            await send_html(context.bot, chat_id, texts.deleted(item))
    elif args == ["delete"]:
        await send_html(context.bot, chat_id, texts.DELETE_USAGE)
    else:
        await send_html(context.bot, chat_id, texts.MEMORY_USAGE)


async def send_change_notice(
    context: BotContext, chat_id: int, changes: list[MemoryChange]
) -> None:
    """Tell the user what the agent saved or updated in this turn."""
    # Issue 5 adds the notice with an Undo button; until then the reply itself says it.


def add_memory_handlers(application: Application) -> None:
    """Register the /memory command and its buttons."""
    application.add_handler(CommandHandler("memory", memory_command))
