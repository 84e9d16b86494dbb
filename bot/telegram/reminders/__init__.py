"""Reminders in Telegram: fired ones sent, /reminders, /timezone, their views; imports no wiring."""
