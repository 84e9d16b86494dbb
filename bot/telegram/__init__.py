"""Everything Telegram: one folder per feature, the chat path, the runtime, formatting.

The only package that imports telegram (besides the wiring that builds the Application).
It may import bot.agent, bot.media, bot.upkeep, bot.conversations, bot.reminders,
bot.settings and memory; never bot.app.
"""
