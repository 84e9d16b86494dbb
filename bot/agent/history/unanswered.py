"""The turns the model has not answered yet, and the files of them a request can carry.

Photos sent together (an album, or several at once) are stored as user turns of their own and
answered together. They are never folded into the summary before the model has seen them; if
their files alone cost more than the history budget, the newest that fit are sent and the
model and the user are both told how many were left out.
"""

from collections.abc import Sequence
from dataclasses import replace

from bot.conversations.content import is_tool_result
from bot.conversations.file_refs import FileRef, file_ref, file_refs
from bot.conversations.snapshot import StoredTurn


def first_unanswered(turns: Sequence[StoredTurn]) -> int:
    """Return the index of the first user message after the model's last answer (or the end)."""
    last_answer = max((i for i, t in enumerate(turns) if t.role == "assistant"), default=-1)
    for index in range(last_answer + 1, len(turns)):
        turn = turns[index]
        if turn.role == "user" and not is_tool_result(turn.content):
            return index
    return len(turns)


def unanswered_files(turns: Sequence[StoredTurn]) -> list[FileRef]:
    """Return the files of the user messages the model has not answered yet, oldest first."""
    return [ref for turn in turns[first_unanswered(turns) :] for ref in file_refs(turn.content)]


def newest_files_within(turns: Sequence[StoredTurn], budget: int) -> set[str]:
    """Return the hashes of the newest files whose estimated tokens fit budget (at least one)."""
    admitted: set[str] = set()
    used = 0
    for turn in reversed(turns):
        for ref in reversed(file_refs(turn.content)):
            if ref.sha256 in admitted or (admitted and used + ref.tokens > budget):
                continue
            admitted.add(ref.sha256)
            used += ref.tokens
    return admitted


def only_files(turns: Sequence[StoredTurn], admitted: set[str]) -> list[StoredTurn]:
    """Return the turns without the file references whose hash is not admitted."""
    return [
        replace(
            turn,
            content=[
                block
                for block in turn.content
                if block["type"] != "file" or file_ref(block).sha256 in admitted
            ],
        )
        for turn in turns
    ]


def left_out_note_for_model(left_out: int, total: int) -> str:
    """Tell the model how many of the files it is asked about were not sent."""
    return (
        f"[{left_out} of the {total} files of this message were left out of this request: "
        "together they were more than fits at once, so only the newest were sent. Tell the "
        "user which ones you could not see if it matters.]"
    )
