"""Rules about the web: a reply cites what it found (the sources the user is shown)."""

from dataclasses import dataclass

from evals.rules.base import turn_number, turn_words
from evals.transcript import Transcript


@dataclass(frozen=True)
class CitesWeb:
    """A response of the turn has a text block citing a web search result or a page read."""

    turn: int = -1
    note: str = ""

    @property
    def label(self) -> str:
        return self.note or f"cites a web source{turn_words(self.turn)}"

    def check(self, transcript: Transcript) -> str | None:
        wanted = turn_number(self.turn, len(transcript.replies))
        for exchange in transcript.agent_exchanges:
            if exchange.turn != wanted:
                continue
            for block in exchange.response.get("content", []):
                if block.get("type") == "text" and block.get("citations"):
                    return None
        return "no text of the answer cites a web source"
