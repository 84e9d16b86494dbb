"""Benchmarks against the fake servers: `python -m tests.perf` (see docs/performance.md)."""
