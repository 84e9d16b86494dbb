"""Batches of memory changes (tidy, import): apply, revert, store; imports no telegram or bot."""
