"""Each rule kind holds when it should and breaks, with a reason, when it should not."""

import pytest

from evals.rules import (
    CREATED,
    AnyOf,
    AsksQuestion,
    AtMost,
    Called,
    Compacted,
    DoesNotSay,
    HasMemory,
    Marks,
    MemoryCount,
    NoMemory,
    NotCalled,
    NotInBlock,
    NoWrites,
    Questions,
    SavedWithSubject,
    Says,
    SeedKept,
    SeedUpdated,
    ShowsNoIds,
    ToolsOffered,
)
from evals.transcript import Exchange
from tests.evals.transcripts import agent_call, memory, transcript

BOSS_ADD = ("add_to_memory", {"content": "Alec is the user's boss", "category": "person",
                              "subject": "alec"}, "Saved as abcd1234", False)  # fmt: skip
SEEDS = {"sarah": "sarah001"}
UPDATE_SARAH = ("update_memory", {"memory_id": "sarah001", "content": "Sarah is on Design"},
                "Updated sarah001 (version 2).", False)  # fmt: skip
FORGET_SAVED = ("forget_memory", {"memory_id": "abcd1234"}, "Forgot abcd1234", False)
FORGET_SEED = ("forget_memory", {"memory_id": "sarah001"}, "Forgot sarah001", False)
BAD_ADD = ("add_to_memory", {"content": "x"}, "Invalid input for add_to_memory", True)
BARE_ADD = ("add_to_memory", {"content": "The user likes tea", "category": "preference",
                              "subject": " "}, "Saved as tea12345", False)  # fmt: skip
ASK_ABOUT_ANN = ("propose_memory", {"facts": [{"content": "Ann is learning Portuguese",
                  "category": "context", "subject": "Ann: Portuguese"}], "about": "Ann"},
                 "Proposed, not saved", False)  # fmt: skip
WHEN = ("create_reminder", {"text": "call Sarah", "when": "Friday at 9"}, "Set", False)
AT_OR_WHEN = AnyOf((Called("create_reminder", arguments=(("at_local", "T09:00"),)),
                    Called("create_reminder", arguments=(("when", r"\bfriday\b"),))))  # fmt: skip
MARKED_TEXT = {"content": [{"type": "text", "text": "Hi Alec. [[mem:sarah001]]"}]}
MARKED = [Exchange(1, {"system": [], "messages": []}, MARKED_TEXT)]
SUMMARY = Exchange(3, {"system": "summarise", "messages": []}, {"content": [], "usage": {}})

HOLDS = [
    (Called("add_to_memory"), transcript(calls={1: [BOSS_ADD]})),
    (Called("add_to_memory", turn=1, category="person", subject="Alec", content="BOSS"),
     transcript(replies=["a", "b"], calls={1: [BOSS_ADD]})),
    (Called("add_to_memory", turn=-1), transcript(replies=["a", "b"], calls={2: [BOSS_ADD]})),
    (Called("update_memory", memory_id="sarah", content="design"),
     transcript(calls={1: [UPDATE_SARAH]}, seeds=SEEDS)),
    (Called("forget_memory", turn=2, memory_id=CREATED),
     transcript(replies=["a", "b"], calls={1: [BOSS_ADD], 2: [FORGET_SAVED]})),
    (NotCalled("add_to_memory"), transcript(calls={1: [UPDATE_SARAH]}, seeds=SEEDS)),
    (NotCalled("add_to_memory", turn=2), transcript(replies=["a", "b"], calls={1: [BOSS_ADD]})),
    (NoWrites(), transcript()),
    (SavedWithSubject(), transcript(calls={1: [BAD_ADD, BOSS_ADD]})),
    (AtMost("forget_memory", 1), transcript(calls={1: [FORGET_SEED]})),
    (MemoryCount(1), transcript(memories=[memory("a1", "x"), memory("b2", "y", forgotten=True)])),
    (HasMemory("alec.*boss", category="person", subject="ALEC"),
     transcript(memories=[memory("a1", "Alec is the boss", subject="Alec")])),
    (NoMemory("4321"), transcript(memories=[memory("a1", "PIN 4321", forgotten=True)])),
    (SeedUpdated("sarah", "design"),
     transcript(memories=[memory("sarah001", "Sarah is on Design", version=2)], seeds=SEEDS)),
    (SeedKept("sarah"), transcript(memories=[memory("sarah001", "Sarah")], seeds=SEEDS)),
    (Says("/memory clear"), transcript(replies=["Send /MEMORY CLEAR to do that."])),
    (DoesNotSay("remind you"), transcript(replies=["I can't set reminders."])),
    (AsksQuestion(turn=1), transcript(replies=["Should I remember it?", "ok"])),
    (Questions(1), transcript(replies=["Nice! Should I remember both?"])),
    (Questions(1, about="remember"),
     transcript(replies=["How is she? Lovely. Should I remember both?"])),
    (AsksQuestion(about="both"), transcript(replies=["Nice! Should I remember both?"])),
    (ToolsOffered(True), transcript(calls={1: [BOSS_ADD]})),
    (ToolsOffered(False), transcript(exchanges=[Exchange(1, {"system": [], "messages": []}, {})])),
    (NotInBlock("sarah"), transcript(exchanges=agent_call(1, [], block="- [id:other001] x"),
                                     seeds=SEEDS)),
    (Compacted(after=1), transcript(replies=["a", "b", "c"], exchanges=[SUMMARY])),
    (Called("propose_memory", content="Portuguese", arguments=(("about", "^Ann$"),)),
     transcript(calls={1: [ASK_ABOUT_ANN]})),
    (AT_OR_WHEN, transcript(calls={1: [WHEN]})),
    (Called("add_to_memory", subject_like="^al"), transcript(calls={1: [BOSS_ADD]})),
    (Marks("sarah"), transcript(exchanges=MARKED, seeds=SEEDS)),
    (Marks("sarah", used=False), transcript(seeds=SEEDS)),
    (ShowsNoIds(), transcript(replies=["Sarah is on Design."], seeds=SEEDS)),
]  # fmt: skip

BREAKS = [
    (Called("propose_memory", arguments=(("about", "^Bob$"),)),
     transcript(calls={1: [ASK_ABOUT_ANN]}), "no call matched"),
    (AT_OR_WHEN, transcript(calls={1: [BOSS_ADD]}), "create_reminder was not called; "),
    (Called("add_to_memory"), transcript(), "add_to_memory was not called"),
    (Called("add_to_memory", turn=2), transcript(replies=["a", "b"], calls={1: [BOSS_ADD]}),
     "not called in turn 2"),
    (Called("add_to_memory", category="preference"), transcript(calls={1: [BOSS_ADD]}),
     "no call matched: add_to_memory"),
    (Called("add_to_memory", subject="Sarah"), transcript(calls={1: [BOSS_ADD]}),
     "no call matched"),
    (Called("add_to_memory", content="team"), transcript(calls={1: [BOSS_ADD]}), "no call matched"),
    (Called("add_to_memory"), transcript(calls={1: [BAD_ADD]}), "-> error"),
    (Called("update_memory", memory_id="sarah"),
     transcript(calls={1: [("update_memory", {"memory_id": "k9x2m4p1", "content": "Sarah"},
                            "No memory with id", True)]}, seeds=SEEDS), "no call matched"),
    (Called("forget_memory", memory_id=CREATED),
     transcript(replies=["a", "b"], calls={1: [BOSS_ADD], 2: [FORGET_SEED]}, seeds=SEEDS),
     "no call matched: forget_memory"),
    (Called("forget_memory", memory_id=CREATED), transcript(calls={1: [FORGET_SEED]}),
     "no call matched"),
    (NotCalled("add_to_memory"), transcript(calls={1: [BAD_ADD]}), "called add_to_memory"),
    (NoWrites(turn=1), transcript(calls={1: [FORGET_SEED]}), "called forget_memory"),
    (SavedWithSubject(), transcript(calls={1: [BOSS_ADD], 2: [BARE_ADD]}, replies=["a", "b"]),
     "no subject: add_to_memory"),
    (SavedWithSubject(), transcript(calls={1: [BAD_ADD]}), "add_to_memory saved nothing"),
    (AtMost("forget_memory", 1), transcript(calls={1: [FORGET_SEED, FORGET_SAVED]}),
     "called forget_memory 2 times"),
    (MemoryCount(0), transcript(memories=[memory("a1", "PIN 4321")]), "1 active: PIN 4321"),
    (HasMemory("boss", category="preference"), transcript(memories=[memory("a1", "boss")]),
     "none does"),
    (HasMemory("boss"), transcript(memories=[memory("a1", "boss", forgotten=True)]), "none does"),
    (NoMemory("4321"), transcript(memories=[memory("a1", "PIN 4321")]), "found: PIN 4321"),
    (SeedUpdated("sarah", "design"), transcript(memories=[memory("sarah001", "x")], seeds=SEEDS),
     "was not updated"),
    (SeedUpdated("sarah", "design"),
     transcript(memories=[memory("sarah001", "Sarah left", version=2)], seeds=SEEDS),
     "now says: Sarah left"),
    (SeedUpdated("sarah", "design"),
     transcript(memories=[memory("sarah001", "Design", version=2, forgotten=True)], seeds=SEEDS),
     "no longer active"),
    (SeedKept("sarah"), transcript(memories=[memory("sarah001", "x", version=2)], seeds=SEEDS),
     "now says"),
    (Says("password manager"), transcript(replies=["OK"]), "reply: OK"),
    (Says("anything"), transcript(replies=["a", None]), "no reply"),
    (DoesNotSay("I'll remind you"), transcript(replies=["Sure, I'll remind you at 9."]),
     "reply: Sure"),
    (AsksQuestion(), transcript(replies=["Noted."]), "no such question: Noted."),
    (Questions(1), transcript(replies=["How is she? Should I save it?"]),
     "2: How is she? | Should I save it?"),
    (Questions(0, about="save"), transcript(replies=["Done. Should I save more?"]),
     "1: Should I save more?"),
    (AsksQuestion(about="cello"), transcript(replies=["Should I remember Maya? And cello."]),
     "no such question"),
    (ToolsOffered(False), transcript(calls={1: [BOSS_ADD]}), "offered: add_to_memory"),
    (ToolsOffered(True), transcript(), "no agent request"),
    (NotInBlock("sarah"), transcript(exchanges=agent_call(1, [], block="- [id:sarah001] S"),
                                     seeds=SEEDS), "is in the block"),
    (Compacted(after=1), transcript(replies=["a", "b"]), "summaries in turns none"),
    (Compacted(after=1, by=2), transcript(replies=["a", "b", "c"], exchanges=[SUMMARY]),
     "summaries in turns [3]"),
    (Called("add_to_memory", subject_like="^boss"), transcript(calls={1: [BOSS_ADD]}),
     "no call matched"),
    (Marks("sarah"), transcript(seeds=SEEDS), "no marker of 'sarah'"),
    (Marks("sarah", used=False), transcript(exchanges=MARKED, seeds=SEEDS), "a marker of 'sarah'"),
    (ShowsNoIds(), transcript(replies=["[sarah001] Sarah"], seeds=SEEDS), "shows sarah001"),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "trial"), HOLDS, ids=lambda x: getattr(x, "label", ""))
def test_the_rule_holds(rule, trial):
    assert rule.check(trial) is None


@pytest.mark.parametrize(("rule", "trial", "reason"), BREAKS, ids=lambda x: getattr(x, "label", ""))
def test_the_rule_breaks_with_a_reason(rule, trial, reason):
    assert reason in (rule.check(trial) or "(held)")


def test_labels_say_what_the_rule_requires():
    assert Called("add_to_memory", turn=2, subject="Alec").label == (
        "calls add_to_memory(subject=Alec) in turn 2"
    )
    assert NoWrites(turn=-1).label == "writes no memory in the last turn"
    assert MemoryCount(1).label == "exactly 1 active memory at the end"
    assert Says("x", note="suggests a vault").label == "suggests a vault"


def test_tool_calls_are_read_with_their_results_from_what_was_sent():
    trial = transcript(replies=["a", "b"], calls={1: [BOSS_ADD], 2: [BAD_ADD]})
    added, failed = trial.calls
    assert (added.turn, added.name, added.saved_id, added.is_error) == (
        1, "add_to_memory", "abcd1234", False
    )  # fmt: skip
    assert (failed.turn, failed.is_error, failed.saved_id) == (2, True, None)
    assert trial.created_ids == {"abcd1234"}
    assert trial.usage().input == 400
