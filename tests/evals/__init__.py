"""Tests of the memory evaluation (evals/), offline against the fake Messages API."""
