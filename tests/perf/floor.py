"""A reference bot with none of our code: what PTB and the anthropic SDK cost on their own."""

from anthropic import AsyncAnthropic
from anthropic.types import Message, MessageParam
from telegram import Update
from telegram.ext import AIORateLimiter, Application, ApplicationBuilder, MessageHandler, filters

from bot.app import MAX_CONCURRENT_UPDATES
from bot.settings import Settings


def build_floor_application(
    settings: Settings, *, concurrent: bool = True, rate_limited: bool = True
) -> Application:
    """Build a bot that relays each text to the model and the answer back, nothing else.

    With STREAM_REPLIES on it reads the answer through the SDK's messages.stream, as the bot
    does in private chats; off, through messages.create.
    """
    client = AsyncAnthropic(
        api_key=settings.anthropic_api_key.get_secret_value(),
        base_url=settings.anthropic_base_url,
    )

    async def relay(update: Update, context) -> None:
        incoming, chat = update.effective_message, update.effective_chat
        assert incoming is not None and chat is not None  # filters.TEXT: a message in a chat
        model, max_tokens = settings.anthropic_model, settings.anthropic_max_tokens
        messages: list[MessageParam] = [{"role": "user", "content": incoming.text or ""}]
        if settings.stream_replies:
            async with client.messages.stream(
                model=model, max_tokens=max_tokens, messages=messages
            ) as stream:
                message: Message = await stream.get_final_message()
        else:
            message = await client.messages.create(
                model=model, max_tokens=max_tokens, messages=messages
            )
        answer = "".join(block.text for block in message.content if block.type == "text")
        await context.bot.send_message(chat.id, answer)

    async def close(application: Application) -> None:
        await client.close()

    builder: ApplicationBuilder = (
        ApplicationBuilder()
        .token(settings.telegram_bot_token.get_secret_value())
        .base_url(settings.telegram_api_base_url)
        .concurrent_updates(MAX_CONCURRENT_UPDATES if concurrent else False)
        .post_shutdown(close)
    )
    if rate_limited:
        builder = builder.rate_limiter(AIORateLimiter(max_retries=3))
    application = builder.build()
    application.add_handler(MessageHandler(filters.TEXT, relay))
    return application
