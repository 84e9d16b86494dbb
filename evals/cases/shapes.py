"""The shapes of issue 32's memory questions, and a reminder moved by the user's own words.

Several facts in one question with a toggle each, an update shown old -> new, a fact about the
whole group that any member may answer, and "move it to 5 pm".
"""

from evals.case import Case, Seed, Turn, said
from evals.cases.reminders import timed
from evals.rules import (
    AtMost,
    Called,
    HasMemory,
    MemoryCount,
    NoMemory,
    NotCalled,
    Says,
    SeedUpdated,
)
from memory.categories import Category

BOSS = Seed("boss", "Alec is the user's boss", Category.PERSON, "Alec")

CASES: tuple[Case, ...] = (
    Case(
        name="several_facts_one_toggled_off",
        about="Two facts in one message: one question with both; the user toggles the second "
        "off and taps Remember: only the first is saved.",
        requires_tools=("propose_memory",),
        turns=(
            Turn("My brother Tom lives in Oslo now, and I've started training for a marathon."),
            Turn("", tap="Toggle 2"),
            Turn("", tap="Remember"),
        ),
        rules=(
            Called("propose_memory", turn=1, content=r"Tom|Oslo", note="asks about Tom"),
            Called("propose_memory", turn=1, content="marathon", note="asks about the marathon"),
            AtMost("propose_memory", 1, turn=1, note="in one call: one question, both facts"),
            HasMemory(r"Tom.*Oslo|Oslo.*Tom", note="the fact left on is saved"),
            NoMemory("marathon", note="the fact toggled off is not"),
            MemoryCount(1),
        ),
    ),
    Case(
        name="update_tapped_old_to_new",
        about="A second fact about Alec said in passing is proposed as an update of his memory "
        "(memory_id); a tap of Remember updates it in place, the old fact kept.",
        requires_tools=("propose_memory",),
        seeds=(BOSS,),
        turns=(Turn("Oh, and Alec's birthday is on 3 May."), Turn("", tap="Remember")),
        rules=(
            Called(
                "propose_memory",
                turn=1,
                memory_id="boss",
                content=r"\bboss\b",
                note="proposes an update of Alec's memory that keeps the boss",
            ),
            SeedUpdated("boss", r"\b3(rd)? May\b|\bMay 3", note="the tap updates that memory"),
            HasMemory(r"\bboss\b", note="Alec is still remembered as the boss"),
            MemoryCount(1, note="one memory about Alec"),
        ),
    ),
    Case(
        name="group_fact_about_the_whole_group",
        about="Group: a fact about the whole group is asked with no about, needs no member's "
        "name, and any member may answer it (Bob taps Remember on Ann's words).",
        requires_tools=("propose_memory",),
        turns=(
            Turn("@membot By the way, our team meets every Thursday evening.", sender="Ann"),
            Turn("", tap="Remember", sender="Bob"),
        ),
        rules=(
            Called(
                "propose_memory",
                turn=1,
                content="Thursday",
                arguments=(("about", "^$"),),
                note="asks with no about: the whole group's",
            ),
            HasMemory("Thursday", note="saved on another member's tap"),
            NoMemory(r"\bthe user\b", note="no memory says 'the user'"),
        ),
    ),
    Case(
        name="reminder_moved_to_five",
        about='"Move it to 5 pm": update_reminder with only the new time (the user\'s words or '
        "a wall time); the day is kept, and the new time is said back.",
        turns=said("Remind me tomorrow at 9 to call the bank.", "Move it to 5 pm."),
        rules=(
            timed(
                "update_reminder",
                r"^2026-03-12T17:00",
                r"\b(5\s*pm|17[:.]00)\b",
                "moves it to 17:00",
                turn=2,
            ),
            NotCalled("create_reminder", turn=2, note="does not set a second one"),
            Says(r"\b17[:.]00\b|\b5(:00)?\s*pm\b", turn=2, note="says the new time back"),
        ),
    ),
)
