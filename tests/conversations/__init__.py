"""Tests of bot/conversations/: conversations and turns on real databases."""
