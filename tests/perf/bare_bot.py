"""The reference process of figure 6: PTB and the anthropic SDK alone, relaying each text.

Run as a script (`python tests/perf/bare_bot.py`), so that nothing of ours is imported: the
same environment variables as `python -m bot` say where Telegram and the Messages API are.
"""

import os

from anthropic import AsyncAnthropic
from telegram import Update
from telegram.ext import AIORateLimiter, Application, ApplicationBuilder, MessageHandler, filters

MODEL = "claude-sonnet-4-5"
MAX_TOKENS = 1024
CONCURRENT_UPDATES = 256  # bot.app.MAX_CONCURRENT_UPDATES, not imported: nothing of ours


def build() -> Application:
    """Build a bot that streams each text to the model and sends the answer back."""
    client = AsyncAnthropic(
        api_key=os.environ["ANTHROPIC_API_KEY"], base_url=os.environ["ANTHROPIC_BASE_URL"]
    )

    async def relay(update: Update, context) -> None:
        incoming, chat = update.effective_message, update.effective_chat
        assert incoming is not None and chat is not None  # filters.TEXT: a message in a chat
        async with client.messages.stream(
            model=MODEL,
            max_tokens=MAX_TOKENS,
            messages=[{"role": "user", "content": incoming.text or ""}],
        ) as stream:
            message = await stream.get_final_message()
        answer = "".join(block.text for block in message.content if block.type == "text")
        await context.bot.send_message(chat.id, answer)

    async def close(application: Application) -> None:
        await client.close()

    base_url = os.environ["TELEGRAM_API_BASE_URL"]
    application = (
        ApplicationBuilder()
        .token(os.environ["TELEGRAM_BOT_TOKEN"])
        .base_url(base_url)
        .concurrent_updates(CONCURRENT_UPDATES)
        .rate_limiter(AIORateLimiter(max_retries=3))
        .post_shutdown(close)
        .build()
    )
    application.add_handler(MessageHandler(filters.TEXT, relay))
    return application


if __name__ == "__main__":
    build().run_polling(allowed_updates=Update.ALL_TYPES)
