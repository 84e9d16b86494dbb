"""Conversations and their turns, stored as they happen, and the content blocks they hold.

Knows neither the agent nor Telegram: never imports bot.agent, bot.telegram or telegram.
"""
