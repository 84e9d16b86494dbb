"""Reminders: the assistant speaks first, on time, exactly once; knows no Telegram."""
