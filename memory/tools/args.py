"""What each memory tool takes, as pydantic models: the schema the model sees, and its checks."""

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)

from memory.categories import Category
from memory.ids import ID_PATTERN
from memory.items import normalize_subject
from memory.proposals import MAX_FACTS
from memory.text import storable

MemoryContent = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=5, max_length=500),
    AfterValidator(storable),
    Field(
        description=(
            "The fact as one self-contained sentence in the third person, in the user's "
            "language, with absolute dates: 'Alec is the user's boss', in a group naming the "
            "person: 'Ann's boss is Alec'. 5 to 500 characters."
        )
    ),
]

MemoryId = Annotated[
    str,
    Field(
        pattern=ID_PATTERN.pattern,
        description=(
            "The 8-character id of [id:...] in the memory block, a tool result or the summary."
        ),
    ),
]

SearchQuery = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=300),
    AfterValidator(storable),
    Field(description="A few words to look for, e.g. 'boss' or 'lease March'. Any language."),
]


class AddToMemoryArgs(BaseModel):
    """Arguments of add_to_memory (and of each fact propose_memory asks about)."""

    model_config = ConfigDict(extra="forbid")

    content: MemoryContent
    category: Category = Field(
        description=(
            "person: someone in the user's life; preference: how the user likes things done; "
            "context: facts about the user's life, work or situation; project: ongoing work."
        )
    )
    subject: str = Field(
        max_length=200,
        description=(
            "The person's or project's name ('Alec'), or for a preference or context its topic "
            "in 1-3 words ('due dates'); in a group, a member's own preference or context "
            "starts with their name ('Ann: diet'), a fact about the whole group needs no name "
            "('meeting day'). One memory per subject: for a topic you already have, reuse its "
            "subject, or update that memory."
        ),
    )

    @field_validator("subject")
    @classmethod
    def _subject_given(cls, subject: str) -> str:
        """Refuse control characters and a blank subject; fold the spacing."""
        folded = normalize_subject(storable(subject))
        if folded is None:
            raise ValueError("give a subject: a name, or a topic in 1-3 words")
        return folded


class ProposedFactArgs(AddToMemoryArgs):
    """One fact of propose_memory: a new memory, or the new content of an existing one."""

    memory_id: MemoryId | None = Field(
        None,
        description=(
            "To propose an update of a memory you have (another fact about its subject, or a "
            "change): its id; content is then its complete new content, keeping the old fact. "
            "Leave out for a new memory."
        ),
    )


class ProposeMemoryArgs(BaseModel):
    """Arguments of propose_memory: the facts of one question, and whom it is about."""

    model_config = ConfigDict(extra="forbid")

    facts: list[ProposedFactArgs] = Field(
        min_length=1,
        max_length=MAX_FACTS,
        description=(
            f"Every lasting fact of the user's message, 1 to {MAX_FACTS}: one question shows "
            "them all, each with a toggle."
        ),
    )
    about: str | None = Field(
        None,
        max_length=200,
        description=(
            "In a group only: the name of the member the facts are about, as the date line "
            "shows it ('from Ann'); only that member can answer. Leave out for facts about the "
            "whole group, and in a private chat."
        ),
    )


class UpdateMemoryArgs(BaseModel):
    """Arguments of update_memory."""

    model_config = ConfigDict(extra="forbid")

    memory_id: MemoryId
    content: MemoryContent


class ForgetMemoryArgs(BaseModel):
    """Arguments of forget_memory."""

    model_config = ConfigDict(extra="forbid")

    memory_id: MemoryId


class SearchArgs(BaseModel):
    """Arguments of search_memory and search_conversations."""

    model_config = ConfigDict(extra="forbid")

    query: SearchQuery


class SearchConversationsArgs(SearchArgs):
    """Arguments of search_conversations: the words, and best matches or newest first."""

    order: Literal["relevance", "newest"] = Field(
        "relevance",
        description='"relevance" (default): best matches first; "newest": the latest first.',
    )
