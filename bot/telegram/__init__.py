"""Everything Telegram: handlers, /memory and its buttons, views, texts, delivery, formatting.

The only package that imports telegram (besides the wiring that builds the Application).
It may import bot.agent, bot.conversations, bot.settings and memory; never bot.app or
bot.compose.
"""
