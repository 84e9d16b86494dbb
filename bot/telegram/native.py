"""Bot API 10.1-10.3 that python-telegram-bot 22.8 (Bot API 10.0) does not speak yet.

Telegram's own Stop button on drafts and Rich Messages go through this module only, typed as
the Bot API documents them, so that the day PTB ships them natively, deleting this module (and
calling PTB's methods where it is imported) is the whole migration.

What the Bot API documents (core.telegram.org/bots/api, read for Bot API 10.3):

- sendMessageDraft and sendRichMessageDraft take can_stop (show the user a button to stop
  further drafts; the bot receives the update stopped_message_generation on a press) and
  keep_on_stop (keep the draft in the chat on a press; it still goes after a short time or
  when the bot sends a message, so a bot that keeps the text sends it as a message).
- Update.stopped_message_generation is a MessageGenerationStopped: chat (the private chat),
  message_thread_id (optional), draft_id (the draft that was stopped).
- sendRichMessage(chat_id, rich_message, message_thread_id, reply_markup, ...) returns the
  Message (core.telegram.org/bots/api/methods/sendrichmessage.md); editMessageText edits
  "text, rich and game messages" and takes rich_message instead of text (its text is
  "required if rich_message isn't specified"); sendRichMessageDraft(chat_id, draft_id
  (non-zero), rich_message, message_thread_id, can_stop, keep_on_stop) returns True and,
  like sendMessageDraft, is for private chats only.
- InputRichMessage: exactly one of html, markdown or blocks; is_rtl, skip_entity_detection.
- Rich message limits (the section "Rich Message Limits" of the rich message formatting
  options, core.telegram.org/bots/api#rich-message-formatting-options, checked again for
  Bot API 10.3): 32,768 characters of text (custom emoji alternative text and formula
  sources included), 500 blocks (nested blocks, list items, table rows, quotation and
  details blocks each count), nesting 16 deep, 50 media, 20 table columns
  (bot/telegram/format/rich.py keeps to them: they outlive this module).

Not found in the documentation, so decided here as the real API most plausibly behaves: the
wording of the errors past those limits (a 400 "Bad Request: ..." like every other method's;
the bot falls back to today's HTML on any 400 from a rich method, whatever its words), and
that a stopped draft's update reaches bots through getUpdates and webhooks alike, only when
allowed_updates names it (it is not in PTB's Update.ALL_TYPES, so ALLOWED_UPDATES adds it).
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from telegram import Bot, InlineKeyboardMarkup, Message, Update
from telegram.constants import ParseMode
from telegram.ext import BaseHandler

STOPPED_UPDATE = "stopped_message_generation"
# What the bot asks Telegram for, polling or on webhooks: PTB's list and the update it lacks.
ALLOWED_UPDATES = [*Update.ALL_TYPES, STOPPED_UPDATE]
# The methods that send a draft (a preview), for the rate limiter.
DRAFT_ENDPOINTS = frozenset({"sendMessageDraft", "sendRichMessageDraft"})
SEND_RICH_MESSAGE = "sendRichMessage"
SEND_RICH_MESSAGE_DRAFT = "sendRichMessageDraft"


class _Model(BaseModel):
    """A Bot API object: fields Telegram adds later are ignored, none is changed after."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class StoppedChat(_Model):
    """The chat of a stopped draft (a Chat; only what the bot reads)."""

    id: int
    type: str


class MessageGenerationStopped(_Model):
    """A user pressed Stop on a draft sent with can_stop."""

    chat: StoppedChat
    message_thread_id: int | None = None
    draft_id: int


class InputRichMessage(_Model):
    """A rich message to send: exactly one of html or markdown (blocks are not used here)."""

    html: str | None = None
    markdown: str | None = None
    is_rtl: bool | None = None
    skip_entity_detection: bool | None = None

    @model_validator(mode="after")
    def _one_source(self) -> "InputRichMessage":
        """Refuse a message with both sources or none, as Telegram does."""
        if (self.html is None) == (self.markdown is None):
            raise ValueError("exactly one of html and markdown must be given")
        return self


def stopped_generation(update: object) -> MessageGenerationStopped | None:
    """Return the stop an update carries (PTB keeps it in api_kwargs), or None."""
    if not isinstance(update, Update):
        return None
    raw = update.api_kwargs.get(STOPPED_UPDATE)
    if raw is None:
        return None
    try:
        return MessageGenerationStopped.model_validate(raw)
    except ValidationError:
        return None  # not as documented: nothing to stop


class StoppedGenerationHandler(BaseHandler[Update, Any, None]):
    """Handle the stopped_message_generation updates, which PTB has no handler for."""

    def check_update(self, update: object) -> bool:
        """Tell whether the update is a stopped draft."""
        return stopped_generation(update) is not None


def _rich(markdown: str) -> dict[str, Any]:
    """Return the rich_message parameter for the model's Markdown."""
    return InputRichMessage(markdown=markdown).model_dump(exclude_none=True)


async def send_draft(
    bot: Bot,
    chat_id: int,
    draft_id: int,
    *,
    html: str | None = None,
    markdown: str | None = None,
    thread_id: int | None = None,
    can_stop: bool = False,
) -> None:
    """Send a draft: HTML as a message draft, Markdown as a rich one; with Stop if can_stop.

    A stopped draft is kept (keep_on_stop) until the bot sends what was written as a message.
    """
    stop = {"can_stop": True, "keep_on_stop": True} if can_stop else {}
    if markdown is None:
        await bot.send_message_draft(
            chat_id,
            draft_id,
            html,
            message_thread_id=thread_id,
            parse_mode=ParseMode.HTML,
            api_kwargs=stop or None,
        )
        return
    params: dict[str, Any] = {
        "chat_id": chat_id,
        "draft_id": draft_id,
        "rich_message": _rich(markdown),
    }
    if thread_id is not None:
        params["message_thread_id"] = thread_id
    await bot.do_api_request(SEND_RICH_MESSAGE_DRAFT, api_kwargs={**params, **stop})


async def send_rich_message(
    bot: Bot,
    chat_id: int,
    markdown: str,
    *,
    thread_id: int | None = None,
    reply_markup: InlineKeyboardMarkup | None = None,
) -> Message:
    """Send the model's Markdown as one Rich Message; return the Message Telegram sent."""
    params: dict[str, Any] = {"chat_id": chat_id, "rich_message": _rich(markdown)}
    if thread_id is not None:
        params["message_thread_id"] = thread_id
    if reply_markup is not None:
        params["reply_markup"] = reply_markup
    sent: Message = await bot.do_api_request(
        SEND_RICH_MESSAGE, api_kwargs=params, return_type=Message
    )
    return sent


async def edit_rich_message(
    bot: Bot,
    chat_id: int,
    message_id: int,
    markdown: str,
    *,
    reply_markup: InlineKeyboardMarkup | None = None,
) -> None:
    """Show the Markdown as a Rich Message in place of one of the bot's messages."""
    # PTB knows editMessageText but not its rich_message: text goes as None, which PTB drops.
    await bot.edit_message_text(
        None,  # type: ignore[arg-type]
        chat_id,
        message_id,
        reply_markup=reply_markup,
        api_kwargs={"rich_message": _rich(markdown)},
    )
