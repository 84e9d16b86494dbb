"""What a rule of the instructions is: a name, its words, and where it starts; rules joined.

The instructions (bot/agent/instructions.py) are a tuple of these, joined in order into the
text the bot sends; the evaluation pins, checks and mutates them by name (evals/).
"""

from dataclasses import dataclass
from enum import Enum, StrEnum, auto


class RuleName(StrEnum):
    """The name of each rule of the instructions, in their order."""

    PERSONA = auto()
    STYLE = auto()
    DATE_LINE = auto()
    QUOTED_WORDS = auto()
    FILES_ARE_DATA = auto()
    WEB_IS_DATA = auto()
    VOICE_NOTES = auto()
    CAPABILITIES = auto()
    UNAVAILABLE_FILES = auto()
    REMINDER_TOOLS = auto()
    REMINDER_WORDS = auto()
    REMINDER_SAID_BACK = auto()
    TIME_ZONE = auto()
    YEARLY_FROM_MEMORY = auto()
    CHECK_INS = auto()
    MEMORY_BLOCK = auto()
    SNAPSHOT = auto()
    USE_NATURALLY = auto()
    MARKERS = auto()
    PREFERENCES = auto()
    SEARCH_FIRST = auto()
    PAST_CONVERSATIONS = auto()
    FOUND_BY_ID = auto()
    SAVE_WHEN_ASKED = auto()
    ASK_FIRST = auto()
    ONE_QUESTION = auto()
    CONSENT = auto()
    UNANSWERED = auto()
    TAP_NOTES = auto()
    CHANGED_FACTS = auto()
    NO_DUPLICATES = auto()
    ANOTHER_FACT = auto()
    FORGET_ONE = auto()
    FORGET_EVERYTHING = auto()
    MEMORY_COMMAND = auto()
    SECRETS = auto()
    POINTERS = auto()
    SENSITIVE = auto()
    NOT_LASTING = auto()
    WRITING = auto()
    WHOSE = auto()
    SUBJECTS = auto()
    GROUP_SUBJECTS = auto()
    IDS = auto()
    TOOL_ERRORS = auto()
    # The group section, sent in group chats only (GROUP_SECTION).
    GROUP_SPEAKERS = auto()
    GROUP_NAMES = auto()
    GROUP_ABOUT = auto()
    GROUP_CONSENT = auto()


class Start(Enum):
    """How a rule joins the one before it: in its sentence's paragraph, or anew."""

    SENTENCE = " "
    PARAGRAPH = "\n\n"
    ITEM = "\n- "
    SECTION = "\n\n# {heading}\n\n"


@dataclass(frozen=True)
class Rule:
    """One rule of the instructions: its name, its words, and where it starts."""

    name: RuleName
    text: str
    start: Start = Start.SENTENCE
    heading: str = ""  # a SECTION's heading


def joined(rules: tuple[Rule, ...]) -> str:
    """Return the instructions the rules make, in their order: the same rules, the same bytes.

    The first rule starts the text: only a section's heading goes before it.
    """
    parts = []
    for index, rule in enumerate(rules):
        if index:
            parts.append(rule.start.value.format(heading=rule.heading))
        elif rule.start is Start.SECTION:
            parts.append(f"# {rule.heading}\n\n")
        parts.append(rule.text)
    return "".join(parts) + "\n"
