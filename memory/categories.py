"""The fixed set of memory categories."""

from enum import StrEnum


class Category(StrEnum):
    """What a memory is about; the block lists categories alphabetically."""

    CONTEXT = "context"
    PERSON = "person"
    PREFERENCE = "preference"
    PROJECT = "project"

    @property
    def heading(self) -> str:
        """Return the heading used for this category in the memory block."""
        return self.value.capitalize()
