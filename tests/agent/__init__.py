"""Tests of bot/agent/: request assembly and compaction."""
