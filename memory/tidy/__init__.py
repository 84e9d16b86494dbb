"""Tidy plans and the duplicates found without the model; imports no telegram, anthropic or bot."""
