"""Checks only a model can judge, such as a reply's language, asked in a tiny prompt.

Judged checks are reported apart from the rules: they never decide a pass, a fail or the exit
code, since the judge is a model too. They run only with a key, and not with --no-judge.
"""

from dataclasses import dataclass

from anthropic import APIError, AsyncAnthropic
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

from evals.rules.base import short, turn_number
from evals.transcript import Transcript, Usage

JUDGE_SYSTEM = (
    "You check one property of a chat assistant's reply. Answer with exactly one word: yes or no."
)
JUDGE_MAX_TOKENS = 5


@dataclass(frozen=True)
class Judged:
    """A yes-or-no question about a reply; yes is the good answer."""

    question: str
    turn: int = -1
    note: str = ""

    @property
    def label(self) -> str:
        """Say what is judged, for the report."""
        return self.note or self.question


@dataclass(frozen=True)
class Verdict:
    """What the judge said: True for yes, False for no, None when it could not judge."""

    label: str
    verdict: bool | None
    detail: str = ""


def judge_request(model: str, question: str, reply: str) -> MessageCreateParamsNonStreaming:
    """Return the messages.create arguments that ask the question about a reply."""
    return {
        "model": model,
        "max_tokens": JUDGE_MAX_TOKENS,
        "system": JUDGE_SYSTEM,
        "messages": [{"role": "user", "content": f"{question}\n\n<reply>\n{reply}\n</reply>"}],
    }


def read_verdict(answer: str) -> bool | None:
    """Return True for yes, False for no, None for anything else."""
    word = answer.strip().strip(".!").casefold()
    return {"yes": True, "no": False}.get(word)


class Judge:
    """Asks the judged checks of a case about a trial, and counts the tokens it spends."""

    def __init__(self, client: AsyncAnthropic, model: str):
        self._client = client
        self._model = model
        self.usage = Usage()

    async def verdict(self, check: Judged, transcript: Transcript) -> Verdict:
        """Judge one check against the trial's reply to its turn."""
        reply = transcript.replies[turn_number(check.turn, len(transcript.replies)) - 1]
        if reply is None:
            return Verdict(check.label, None, "no reply to judge")
        request = judge_request(self._model, check.question, reply)
        try:
            message = await self._client.messages.create(**request)
        except APIError as error:
            return Verdict(check.label, None, short(f"judge failed: {error}"))
        self.usage += Usage.of(message.usage.model_dump())
        answer = "".join(b.text for b in message.content if b.type == "text")
        return Verdict(check.label, read_verdict(answer), short(answer, 20))
