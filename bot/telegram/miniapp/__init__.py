"""The Mini App in Telegram: the server it shares with the webhook, its button, its notices.

Imports bot.webapp (the app itself), never the wiring.
"""
