"""/memory import: pasted text, our own export or a Markdown/text file, shown as one plan."""

from telegram import Update

from bot.telegram.chat.handlers import say
from bot.telegram.chat.reading import place_of
from bot.telegram.context import BotContext, owner_id
from bot.telegram.tidy import texts
from bot.telegram.tidy.views import plan_view
from bot.telegram.ui import send_view
from bot.upkeep.memory_import import ImportOutcome
from memory.import_file import ImportTooBig

# A text file to import is read whole; an export may be a zip of up to Telegram's 20 MB.
MAX_TEXT_BYTES = 512 * 1024
TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".text")


def pasted_text(update: Update) -> str:
    """Return what follows '/memory import' in the message, line breaks kept."""
    message = update.effective_message
    text = (message.text or message.caption or "") if message else ""
    rest = text.split(maxsplit=1)[1] if len(text.split(maxsplit=1)) > 1 else ""
    return rest[len("import") :].strip() if rest[:6].lower() == "import" else ""


async def _show(update: Update, context: BotContext, outcome: ImportOutcome) -> None:
    """Say what was left out and show the plan, or say there is nothing to import."""
    if outcome.failed:
        await say(update, context, texts.IMPORT_FAILED)
        return
    if outcome.left_out:
        await say(update, context, texts.left_out(outcome.left_out))
    if outcome.batch_id is None:
        await say(update, context, texts.IMPORT_NOTHING)
        return
    batch = await context.services.tidy.batches.find(owner_id(update), outcome.batch_id)
    rich = context.services.settings.rich_messages
    await send_view(context.bot, place_of(update), plan_view(batch, rich=rich))


async def _from_text(update: Update, context: BotContext, text: str) -> None:
    """Propose the memories a text holds."""
    importer = context.services.importer
    if importer.too_long(text):
        await say(update, context, texts.IMPORT_TOO_LONG)
        return
    await _show(update, context, await importer.from_text(owner_id(update), text))


async def import_memories(update: Update, context: BotContext) -> None:
    """Propose importing the text after the command, or say what to send."""
    text = pasted_text(update)
    if not text:
        await say(update, context, texts.IMPORT_HOW)
        return
    await _from_text(update, context, text)


async def import_file(update: Update, context: BotContext) -> None:
    """Propose importing a file sent with the caption /memory import."""
    message = update.effective_message
    document = message.document if message else None
    if document is None:
        return
    name = (document.file_name or "").lower()
    importer = context.services.importer
    # Telegram says the size up front: a file past the bound is never downloaded.
    if (document.file_size or 0) > importer.bounds.file_bytes:
        await say(update, context, texts.IMPORT_TOO_BIG)
        return
    file = await context.bot.get_file(document.file_id)
    data = bytes(await file.download_as_bytearray())
    try:
        outcome = await importer.from_file(owner_id(update), data)
    except ImportTooBig:
        await say(update, context, texts.IMPORT_TOO_BIG)
        return
    if outcome is not None:
        await _show(update, context, outcome)
        return
    if not name.endswith(TEXT_SUFFIXES) or len(data) > MAX_TEXT_BYTES:
        await say(update, context, texts.IMPORT_UNREADABLE)
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        await say(update, context, texts.IMPORT_UNREADABLE)
        return
    await _from_text(update, context, text.strip())
