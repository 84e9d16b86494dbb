"""The agent: the turn (chat, tool loop, request), its history and its web tools.

Knows no Telegram: never imports telegram or bot.telegram, nor the bulk work in bot.upkeep.
"""
