"""Whose a subject is in a group: "Ann: diet" is Ann's, and the speaker's name says who speaks."""

from memory.categories import Category

# In a group these are about one member, so their subjects start with that member's name.
PERSONAL = frozenset({Category.PREFERENCE, Category.CONTEXT})


def person_of(subject: str | None) -> str | None:
    """Return the name a group subject starts with ("Ann" of "Ann: diet"), if it has one."""
    name, colon, topic = (subject or "").partition(":")
    return name.strip() or None if colon and topic.strip() else None


def is_speaker(name: str, speaker: str) -> bool:
    """Tell whether a subject's name is the speaker's: their full name or its first word."""
    wanted = " ".join(name.split()).casefold()
    full = " ".join(speaker.split()).casefold()
    return wanted in (full, full.split(" ")[0])


def lacks_person(category: Category, subject: str, speaker: str | None) -> bool:
    """Tell whether a group memory about one member misses that member's name in its subject."""
    return speaker is not None and category in PERSONAL and person_of(subject) is None


def someone_elses(subject: str | None, speaker: str | None) -> str | None:
    """Return the other member a group subject belongs to, when it is not the speaker's."""
    name = person_of(subject) if speaker else None
    return name if name and speaker and not is_speaker(name, speaker) else None
