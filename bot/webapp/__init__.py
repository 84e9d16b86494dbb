"""The Mini App: its HTTP API and static page, on the same services as the chat commands.

Imports memory and bot.reminders, never telegram, bot.telegram, bot.agent, bot.media,
bot.upkeep, bot.conversations or the wiring: announcing a change in chat is Telegram's job.
"""
