"""Importing memories from a file sent in the chat; imports no wiring."""
