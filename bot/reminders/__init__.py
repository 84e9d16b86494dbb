"""Reminders: when they fire, their store and the due loop; the assistant speaks first.

Imports memory, bot.conversations and bot.agent (check-ins are answered by the agent), never
telegram, bot.telegram or the wiring: sending a fired reminder is the Telegram layer's job.
"""
