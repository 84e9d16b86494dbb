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
    """Arguments of add_to_memory."""

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
            "in 1-3 words ('due dates'); in a group, a preference or context starts with the "
            "name of the person it is about: 'Ann: diet'. One memory per subject: for a topic "
            "you already have, reuse its subject, or update that memory."
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
