"""Plausible memories, user messages and model replies, the same on every run."""

import random
from datetime import UTC, datetime, timedelta

from memory.categories import Category
from memory.ids import new_memory_id
from memory.items import MemoryItem
from memory.tokens import count_tokens

FIRST = (
    "Alec Sarah Priya Tomas Mei Jonas Amara Felix Ines Kenji Lucia Omar Greta Ravi Noor "
    "Elena Marco Yusuf Hana Pavel Chloe Diego Leila Anton Zoe Mateo Ayla Bruno Sofia Idris"
).split()
LAST = (
    "Novak Chen Okafor Lindqvist Haddad Moreau Tanaka Ferreira Kowalski Singh Brennan Rossi "
    "Petrov Nakamura Alvarez Meyer Osei Dubois Larsen Costa Ivanova Walsh Khan Romero"
).split()
ROLES = (
    "boss", "sister", "brother", "dentist", "running partner", "landlord", "mentor",
    "manager's manager", "oldest friend", "accountant", "daughter's teacher", "co-founder",
)  # fmt: skip
ORGS = ("TechCorp", "Northwind", "the city hospital", "Fabrikam", "a design studio in Porto")
PREFERENCES = (
    "short answers in the morning and longer explanations in the evening",
    "due dates on Fridays rather than Mondays",
    "metric units and 24-hour times",
    "British spelling in anything it writes for work",
    "bullet points over long paragraphs when planning",
    "to be reminded about birthdays a week in advance",
    "vegetarian recipes that take under thirty minutes",
    "window seats and morning flights",
)
FACTS = (
    "lives in Lisbon and commutes by bike",
    "works as a data engineer on the Platform team",
    "is learning Japanese with a tutor on Tuesdays",
    "has a dog called Miso who needs a walk at noon",
    "is allergic to penicillin, as the user asked to remember",
    "runs a book club on the first Thursday of each month",
    "is training for a half marathon in October",
    "shares a car with their partner on weekdays",
)
PROJECTS = ("Atlas", "Kestrel", "Harbor", "Moonlight", "Quartz", "Juniper", "Tidewater")
AREAS = ("data migration", "mobile release", "pricing page", "onboarding flow", "billing")
MONTHS = ("January", "March", "May", "July", "September", "November")

START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


def sample_memories(count: int, seed: int = 7) -> list[tuple[str, Category, str | None]]:
    """Return (content, category, subject) for count memories, about half with a subject."""
    rng = random.Random(seed)
    memories: list[tuple[str, Category, str | None]] = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            name = f"{FIRST[i // 4 % len(FIRST)]} {LAST[i // 4 // len(FIRST) % len(LAST)]}"
            memories.append(
                (
                    f"{name} is the user's {rng.choice(ROLES)} and works at {rng.choice(ORGS)}.",
                    Category.PERSON,
                    name,
                )
            )
        elif kind == 1:
            memories.append(
                (f"The user prefers {rng.choice(PREFERENCES)}.", Category.PREFERENCE, None)
            )
        elif kind == 2:
            memories.append((f"The user {rng.choice(FACTS)}.", Category.CONTEXT, None))
        else:
            project = f"{rng.choice(PROJECTS)} {i // 4}"
            memories.append(
                (
                    f"{project} is due in {rng.choice(MONTHS)}; the user leads the "
                    f"{rng.choice(AREAS)} work and reports to {rng.choice(FIRST)}.",
                    Category.PROJECT,
                    project,
                )
            )
    return memories


def memory_items(count: int, owner_id: int = 111, seed: int = 7) -> list[MemoryItem]:
    """Return count memories as the store would list them, shuffled so sorting has work."""
    items = [
        MemoryItem(
            id=new_memory_id(),
            owner_id=owner_id,
            category=category,
            subject=subject,
            content=content,
            version=1,
            created_at=START + timedelta(minutes=i),
            updated_at=START + timedelta(minutes=i),
        )
        for i, (content, category, subject) in enumerate(sample_memories(count, seed))
    ]
    random.Random(seed).shuffle(items)
    return items


def user_message(i: int) -> str:
    """Return the i-th user message of a plausible chat."""
    asks = (
        "Can you help me plan my week? I have three meetings and a dentist appointment.",
        "What should I cook tonight with leftover rice, two eggs and some spinach?",
        "Draft a short, friendly note to my landlord about the broken heating.",
        "Summarise the pros and cons of moving the release to next Thursday.",
        "Remind me what I told you about the Atlas project deadline?",
        "How long should I rest between intervals for a half marathon plan?",
    )
    return f"{asks[i % len(asks)]} (message {i})"


def model_reply(i: int) -> str:
    """Return the i-th model reply: a few short paragraphs of Markdown, like a chat answer."""
    rng = random.Random(i)
    items = rng.sample(
        [
            "block the mornings for focused work",
            "move the **dentist** to Thursday afternoon",
            "keep Friday free for the `release` checklist",
            "batch the three meetings on Tuesday",
            "leave twenty minutes between calls",
            "prepare the agenda the evening before",
        ],
        k=3,
    )
    bullets = "\n".join(f"- {item}" for item in items)
    return (
        f"Here is a plan that should work (reply {i}):\n\n{bullets}\n\n"
        "If anything changes, tell me and I'll *rearrange* it. Want me to draft the "
        "calendar invites too?"
    )


def long_reply(tokens: int) -> str:
    """Return a Markdown reply of about this many tokens: the shorter replies, joined."""
    parts: list[str] = []
    i = 0
    while count_tokens("\n\n".join(parts)) < tokens:
        parts.append(model_reply(i))
        i += 1
    return "\n\n".join(parts)
