"""Rules about what the model was sent: tools offered, the memory block, compaction.

Most of these check the set-up of a case rather than the model: a case that did not compact,
or whose archived memory is in the block, does not measure what it claims to.
"""

from dataclasses import dataclass

from evals.rules.base import turn_number
from evals.transcript import Transcript
from memory.tools import MEMORY_TOOLS


@dataclass(frozen=True)
class ToolsOffered:
    """Every agent request offered the memory tools (offered=True), or none did (False).

    Reminder tools are offered with memory off too, so only the memory tools count.
    """

    offered: bool
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or ("memory tools offered" if self.offered else "no memory tools offered")

    def check(self, transcript: Transcript) -> str | None:
        requests = transcript.agent_exchanges
        if not requests:
            return "no agent request was made"
        memory = {tool.name for tool in MEMORY_TOOLS}
        offering = [e for e in requests if memory & set(e.tool_names)]
        if self.offered and len(offering) < len(requests):
            return f"{len(requests) - len(offering)} request(s) offered no memory tools"
        if not self.offered and offering:
            return f"offered: {', '.join(sorted(memory & set(offering[0].tool_names)))}"
        return None


@dataclass(frozen=True)
class NotInBlock:
    """The seeded memory's id is in no agent request's system prompt (it is archived)."""

    key: str
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"setup: seed '{self.key}' is not in the memory block"

    def check(self, transcript: Transcript) -> str | None:
        memory_id = transcript.seeds[self.key]
        if any(memory_id in e.system_text for e in transcript.agent_exchanges):
            return f"seed '{self.key}' ({memory_id}) is in the block"
        return None


@dataclass(frozen=True)
class Compacted:
    """The history was summarised after turn `after` and by turn `by` (inclusive)."""

    after: int
    by: int = -1
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"setup: compacted after turn {self.after}, by turn {self.by}"

    def check(self, transcript: Transcript) -> str | None:
        count = len(transcript.replies)
        first, last = turn_number(self.after, count), turn_number(self.by, count)
        turns = [e.turn for e in transcript.exchanges if e.is_summary]
        if any(first < turn <= last for turn in turns):
            return None
        return f"summaries in turns {turns or 'none'}"
