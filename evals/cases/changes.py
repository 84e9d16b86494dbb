"""Changing and forgetting: updates in place (also after compaction), forget that, forget all;
and one fact never overwriting another (a second fact, a second group member)."""

from evals.case import Case, Seed, Turn, said
from evals.cases.long_talk import essay_turns
from evals.rules import (
    CREATED,
    AtMost,
    Called,
    Compacted,
    HasMemory,
    MemoryCount,
    NoMemory,
    NotCalled,
    NoWrites,
    Says,
    SeedKept,
    SeedUpdated,
)
from memory.categories import Category

# The smallest history budget the settings allow, so the essay's parts force compaction.
TINY_HISTORY_BUDGET = 2_000

BOSS = Seed("boss", "Alec is the user's boss", Category.PERSON, "Alec")
TEA = Seed("tea", "The user drinks green tea, no sugar", Category.PREFERENCE, "tea")
EVERYTHING = (
    BOSS,
    TEA,
    Seed("city", "The user lives in Leipzig", Category.CONTEXT),
    Seed("cello", "The user is learning the cello", Category.CONTEXT, "cello"),
    Seed("launch", "The user is preparing the Q3 product launch", Category.PROJECT, "Q3 launch"),
)

CASES = (
    Case(
        name="monday_update",
        about='"Actually, Monday" on a seeded preference: update_memory on its id, no add.',
        seeds=(Seed("meetings", "The user prefers meetings on Tuesdays", Category.PREFERENCE),),
        turns=said(
            "Can you suggest a day for a one-hour planning meeting with my team next week?",
            "Actually, Monday is my preferred day for meetings now.",
        ),
        rules=(
            Called("update_memory", turn=2, memory_id="meetings", content="monday"),
            NotCalled("add_to_memory", note="adds no second memory"),
            SeedUpdated("meetings", "monday"),
            NoMemory("tuesday"),
            MemoryCount(1),
        ),
    ),
    Case(
        name="monday_after_compaction",
        about="Saved early, the save folded away by compaction, then changed: still one update.",
        history_token_budget=TINY_HISTORY_BUDGET,
        turns=said(
            "Remember that I prefer meetings on Tuesdays.",
            *essay_turns(),
            "Actually, make that Monday: I prefer meetings on Mondays now.",
        ),
        rules=(
            Called("add_to_memory", turn=1, content="tuesday"),
            Compacted(after=1, by=-1),
            Called("update_memory", turn=-1, memory_id=CREATED, content="monday"),
            HasMemory("monday"),
            NoMemory("tuesday"),
            MemoryCount(1),
        ),
    ),
    Case(
        name="forget_right_after_save",
        about='"Forget that" right after a save: forgets that id (from the tool result) only.',
        must_pass=True,
        seeds=(BOSS, TEA),
        turns=said("Remember that my gym is FitLife on Oak Street.", "Actually, forget that."),
        rules=(
            Called("add_to_memory", turn=1, content="FitLife"),
            Called(
                "forget_memory",
                turn=2,
                memory_id=CREATED,
                note="forgets the memory it just saved, by the id its tool result gave",
            ),
            NoMemory("FitLife"),
            SeedKept("boss"),
            SeedKept("tea"),
            MemoryCount(2),
        ),
    ),
    Case(
        name="forget_everything_points_to_clear",
        about='"Forget everything": points to /memory clear instead of forgetting one by one.',
        must_pass=True,
        seeds=EVERYTHING,
        turns=said("Forget everything you know about me."),
        rules=(
            Says(r"/memory clear", note="points to /memory clear"),
            AtMost("forget_memory", 1, note="does not call forget_memory in a loop"),
        ),
    ),
    Case(
        name="second_fact_about_a_known_person",
        about="Alec is remembered as the boss; his birthday, said in passing, is proposed as an "
        "update of that memory (memory_id, old -> new) and saved on a yes without losing it.",
        requires_tools=("propose_memory",),
        seeds=(BOSS,),
        turns=said("By the way, Alec's birthday is on 3 May.", "Yes, remember that."),
        rules=(
            NoWrites(turn=1, note="saves nothing before asking"),
            Called(
                "propose_memory",
                turn=1,
                memory_id="boss",
                content=r"\bboss\b.*\bMay\b|"
                r"\bMay\b.*\bboss\b",
                note="proposes an update of Alec's memory, both facts",
            ),
            Called("update_memory", turn=2, memory_id="boss", note="the yes updates that memory"),
            MemoryCount(1, note="one memory about Alec"),
            HasMemory(r"\bboss\b", note="Alec is still remembered as the boss"),
            HasMemory(r"\b3(rd)? May\b|\bMay 3", note="the birthday is saved"),
        ),
    ),
    Case(
        name="group_two_members_one_topic",
        about="Group: Ann's diet is remembered; Bob's is saved as his own, Ann's left unchanged.",
        seeds=(Seed("ann_diet", "Ann is vegetarian", Category.PREFERENCE, "Ann: diet"),),
        turns=(Turn("@membot Remember that I'm vegan.", sender="Bob"),),
        rules=(
            Called("add_to_memory", turn=1),
            SeedKept("ann_diet", note="Ann's memory is not replaced"),
            HasMemory(r"\bBob\b.*\bvegan", note="Bob's diet is saved, naming him"),
            NoMemory(r"\bthe user\b", note="no memory says 'the user'"),
        ),
    ),
)
