"""Bulk memory work (tidy passes, imports, erasure); imports neither bot.agent nor telegram."""
