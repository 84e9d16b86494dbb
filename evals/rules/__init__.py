"""The rule kinds a case is scored by: tool calls, memories at the end, replies, the prompt.

Each rule is a small frozen dataclass with a label and a check that returns None when the rule
holds, or a short reason. Rules read only a Transcript. Imports: evals.transcript and memory;
never the bot's services, the network or the database.
"""

from evals.rules.base import AnyOf, Rule
from evals.rules.calls import CREATED, AtMost, Called, NotCalled, NoWrites, SavedWithSubject
from evals.rules.memories import HasMemory, MemoryCount, NoMemory, SeedKept, SeedUpdated
from evals.rules.prompt import Compacted, NotInBlock, ToolsOffered
from evals.rules.replies import (
    AsksQuestion,
    DoesNotSay,
    Marks,
    Questions,
    QuestionsOverall,
    Says,
    ShowsNoIds,
)
from evals.rules.web import CitesWeb

__all__ = [
    "CREATED",
    "AnyOf",
    "AsksQuestion",
    "AtMost",
    "Called",
    "CitesWeb",
    "Compacted",
    "DoesNotSay",
    "HasMemory",
    "Marks",
    "MemoryCount",
    "NoMemory",
    "NoWrites",
    "NotCalled",
    "NotInBlock",
    "Questions",
    "QuestionsOverall",
    "Rule",
    "SavedWithSubject",
    "Says",
    "SeedKept",
    "SeedUpdated",
    "ShowsNoIds",
    "ToolsOffered",
]
