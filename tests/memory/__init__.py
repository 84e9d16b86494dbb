"""Tests of memory/: the memory domain on real databases."""
