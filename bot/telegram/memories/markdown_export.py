"""/memory export markdown: the active memories as a Markdown file, for people and assistants."""

from telegram import InputFile, Update

from bot.telegram.chat.handlers import say
from bot.telegram.chat.reading import place_of
from bot.telegram.context import BotContext, owner_id
from bot.telegram.tidy import texts
from memory.export_markdown import markdown_export
from memory.models import utcnow

MARKDOWN_WORDS = frozenset({"markdown", "md"})


async def export_markdown(update: Update, context: BotContext) -> None:
    """Send the active memories as one Markdown file."""
    items = (await context.services.memory_control.overview(owner_id(update))).items
    if not items:
        await say(update, context, texts.MARKDOWN_EMPTY)
        return
    now = utcnow()
    place = place_of(update)
    await context.bot.send_document(
        place.chat_id,
        InputFile(markdown_export(items, now), filename=f"memories-{now.date()}.md"),
        caption=texts.markdown_caption(len(items)),
        message_thread_id=place.thread_id,
    )
