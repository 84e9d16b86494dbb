"""The product spec's six scenarios (README, top): all must pass."""

from evals.case import Case, Seed, said
from evals.cases.phrases import ANNOUNCES_MEMORY, AP, SAVING
from evals.rules import (
    AsksQuestion,
    Called,
    DoesNotSay,
    HasMemory,
    MemoryCount,
    NotCalled,
    NoWrites,
    Questions,
    Says,
    SeedUpdated,
)
from memory.categories import Category

BOSS = Seed("boss", "Alec is the user's boss", Category.PERSON, "Alec")
SHORT_MESSAGES = Seed(
    "style", "The user prefers short, informal messages", Category.PREFERENCE, "writing style"
)

CASES = (
    Case(
        name="boss_asks_first",
        about='A lasting fact said in passing: asks first, then saves it as person/Alec on "yes".',
        must_pass=True,
        turns=said("Alec is my boss by the way.", "yes"),
        rules=(
            NoWrites(turn=1, note="saves nothing before asking"),
            AsksQuestion(turn=1, about=SAVING, note="asks whether to remember it"),
            Called("add_to_memory", turn=2, category="person", subject="Alec", content="boss"),
            HasMemory(r"Alec.*boss|boss.*Alec", category="person"),
            MemoryCount(1),
        ),
    ),
    Case(
        name="explicit_save",
        about='"Remember that I prefer Friday due dates": saves at once, without asking.',
        must_pass=True,
        turns=said("Remember that I prefer Friday due dates."),
        rules=(
            Called("add_to_memory", turn=1, category="preference", content="friday"),
            Questions(0, about=SAVING, note="does not ask whether to save it"),
            HasMemory(r"friday"),
            MemoryCount(1),
        ),
    ),
    Case(
        name="declined_not_saved",
        about='A fact the user declines to keep ("it\'s just for this task") is never saved.',
        must_pass=True,
        turns=said(
            "My manager for this proposal is Priya, by the way. She signs off on the budget.",
            "No, it's just for this task.",
        ),
        rules=(
            AsksQuestion(turn=1, about=SAVING, note="asks before saving"),
            NotCalled("add_to_memory", note="never saves it"),
            Questions(0, turn=2, about=SAVING, note="does not ask again"),
            MemoryCount(0),
        ),
    ),
    Case(
        name="team_change_updates",
        about='"Sarah moved to the Design team": updates the seeded memory in place, unasked.',
        must_pass=True,
        seeds=(Seed("sarah", "Sarah is on the Platform team", Category.PERSON, "Sarah"),),
        turns=said("Sarah moved to the Design team."),
        rules=(
            Called("update_memory", turn=1, memory_id="sarah", content="design"),
            NotCalled("add_to_memory", note="adds no second memory"),
            DoesNotSay(
                r"\b(should|shall) I (update|change|remember|save)\b"
                r"|\bwant me to (update|change|remember|save)\b",
                note="does not ask before updating",
            ),
            SeedUpdated("sarah", "design"),
            MemoryCount(1),
        ),
    ),
    Case(
        name="boss_known_in_new_conversation",
        about="A new conversation uses the seeded boss naturally: no re-asking, no announcing.",
        must_pass=True,
        seeds=(BOSS, SHORT_MESSAGES),
        turns=said("Could you write a two-line message to my boss asking for Friday off?"),
        rules=(
            Says(r"\bAlec\b", note="uses the boss's name"),
            DoesNotSay(ANNOUNCES_MEMORY, note="does not announce that it remembers"),
            DoesNotSay(
                rf"who({AP}s| is) your boss|your boss{AP}?s name|name of your boss",
                note="does not ask who the boss is",
            ),
            NoWrites(),
        ),
    ),
    Case(
        name="commands_point_to_memory",
        about="Asked how to see what it remembers: points to /memory.",
        must_pass=True,
        seeds=(BOSS, SHORT_MESSAGES),
        turns=said("How can I see everything you remember about me?"),
        rules=(Says(r"/memory\b", note="points to /memory"), NoWrites()),
    ),
)
