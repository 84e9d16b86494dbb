"""The agent: the tool loop, request assembly, compaction, and the chat service around them.

Knows no Telegram: never imports telegram or bot.telegram.
"""
