"""The memory domain: items, store and versions, undo log, switch, block, search, tools, engine.

Imports neither telegram, anthropic nor anything of bot.
"""
