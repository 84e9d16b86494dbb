"""A conversation's history: compaction, the memory ledger, unanswered turns; no telegram import."""
