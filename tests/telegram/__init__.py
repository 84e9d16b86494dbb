"""Tests of bot/telegram/: formatting, views, /memory, buttons and delivery, through the fakes."""
