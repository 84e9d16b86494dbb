"""Benchmarks of the bot against the fake servers: run `python -m tests.perf` (see docs/performance.md)."""
