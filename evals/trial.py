"""Play one trial of a case through the bot's real services, and record what happened."""

import asyncio
import io
from dataclasses import replace
from datetime import datetime

from anthropic import APIError, DefaultAsyncHttpxClient
from PIL import Image, ImageDraw, ImageFont

from bot.agent.loop import TurnFailed
from bot.agent.proposal_answers import Member
from bot.agent.user_turn import Forwarded, IncomingMessage, Quote
from bot.compose import Clocks, build_services
from bot.conversations.blocks import VoiceKind
from bot.conversations.snapshot import ChatThread, MessageRef
from bot.conversations.voice_refs import VoiceRef
from bot.media.attachments import FileUnavailable, IncomingFile
from bot.media.media import PDF, PNG
from bot.media.voice import Transcript as Heard
from bot.settings import Settings
from evals.case import TOGGLE, Case, Turn, member_id
from evals.recorder import Recorder
from evals.sandbox import seed_memories
from evals.transcript import Transcript
from memory.proposals import Proposal

# A voice turn's note: never fetched, its transcript is the turn's text (case.Turn.voice).
EVAL_VOICE = VoiceRef(VoiceKind.VOICE, "audio/ogg", "eval-voice-note", 3, transcribed=True)


async def _play(
    services, case: Case, recorder: Recorder, files: "CaseFiles"
) -> tuple[list[str | None], str | None]:
    """Send the case's turns in order; return the replies, and the error that stopped them."""
    replies: list[str | None] = [None] * len(case.turns)
    asked: list[Proposal] = []  # the memory questions shown so far, newest last
    for number, turn in enumerate(case.turns, 1):
        if turn.new_conversation:
            await services.conversations.end(ChatThread(case.owner_id))
        recorder.turn = number
        if turn.tap is not None:
            replies[number - 1] = await _tap(services, case, turn, asked)
            continue
        message = _message(turn)
        if turn.image is not None:
            sent = files.add(f"eval-picture-{number}", picture(turn.image))
            message = replace(message, files=(sent,))
        if turn.pdf is not None:
            sent = files.add(f"eval-document-{number}", document(turn.pdf), PDF)
            message = replace(message, files=(sent,))
        if turn.voice:
            message = replace(message, text="", transcript=Heard(EVAL_VOICE, turn.text))
        try:
            answer = await services.chat.answer_message(
                ChatThread(case.owner_id), case.owner_id, message
            )
        except (APIError, TurnFailed) as error:
            # The SDK retried what it could; the trial ends here and counts as failed.
            cause = error.__cause__ if isinstance(error, TurnFailed) else error
            return replies, f"turn {number}: {type(cause).__name__}: {cause}"
        replies[number - 1] = answer.text
        asked += [change for change in answer.changes if isinstance(change, Proposal)]
    return replies, None


def _message(turn: Turn) -> IncomingMessage:
    """Return a turn as the bot takes in a message: its sender, forward or quote."""
    forwarded = Forwarded(turn.forwarded_from) if turn.forwarded_from else None
    quote = Quote(turn.quote, turn.quote_author) if turn.quote else None
    ref = MessageRef(sender_id=member_id(turn.sender)) if turn.sender else MessageRef()
    return IncomingMessage(
        turn.text, sender_name=turn.sender, forwarded=forwarded, quote=quote, ref=ref
    )


async def _tap(services, case: Case, turn: Turn, asked: list[Proposal]) -> str:
    """Tap a button under the newest memory question (in a group, as the turn's member)."""
    if not asked or turn.tap is None:
        return "[no memory question to tap]"
    answers = services.proposal_answers
    member = Member(member_id(turn.sender), turn.sender) if turn.sender else None
    if turn.tap.startswith(TOGGLE):
        facts = asked[-1].facts
        number = int(turn.tap.removeprefix(TOGGLE))
        if not 1 <= number <= len(facts):
            return f"[no fact {number} to toggle]"
        tap = await answers.toggle(case.owner_id, facts[number - 1].id, member)
    else:
        answer = answers.remember if turn.tap == "Remember" else answers.decline
        tap = await answer(case.owner_id, asked[-1].id, member)
    return f"[tapped {turn.tap}: {tap.result.value}]"


def picture(text: str) -> bytes:
    """Return a PNG of text in black on white, as a photo of a note would show it."""
    font = ImageFont.load_default(size=32)
    width = int(font.getlength(text)) + 40
    image = Image.new("RGB", (width, 100), "white")
    ImageDraw.Draw(image).text((20, 30), text, fill="black", font=font)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def document(text: str) -> bytes:
    """Return a one-page PDF whose only content is text, as a typed note would be."""
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    stream = f"BT /F1 14 Tf 40 760 Td ({escaped}) Tj ET".encode("latin-1", "replace")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.writelines(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
    out.write(trailer % (len(objects) + 1, xref))
    return out.getvalue()


class CaseFiles:
    """The file source of a trial: the pictures and PDFs its turns send, by file id."""

    max_bytes = 1024 * 1024

    def __init__(self) -> None:
        self._files: dict[str, bytes] = {}

    def add(self, file_id: str, data: bytes, media_type: str = PNG) -> IncomingFile:
        """Keep a file for the bot to fetch; return it as a message names it."""
        self._files[file_id] = data
        extension = "pdf" if media_type == PDF else "png"
        return IncomingFile(file_id, f"{file_id}.{extension}", media_type, len(data))

    async def fetch(self, file_id: str) -> bytes:
        """Return a file a turn sent; any other is unavailable."""
        if file_id not in self._files:
            raise FileUnavailable(file_id)
        return self._files[file_id]


class CaseClock:
    """The case's fixed time, for the reminder tools (a trial runs no due loop)."""

    def __init__(self, now: datetime):
        self._now = now

    def now(self) -> datetime:
        """Return the case's time."""
        return self._now

    async def wait(self, until: datetime, wake: asyncio.Event) -> None:
        """Return at once: nothing waits on a case's clock."""


async def run_trial(
    case: Case, settings: Settings, http_client: DefaultAsyncHttpxClient
) -> Transcript:
    """Run the case once on the database the settings name, through the run's HTTP client."""
    clocks = Clocks(now=lambda: case.now, reminders=CaseClock(case.now))
    files = CaseFiles()
    services = build_services(settings, files, clocks=clocks, http_client=http_client)
    try:
        with Recorder().active() as recorder:
            seeds = await seed_memories(services.memories, case)
            if case.zone_known:
                await services.reminders.store.set_zone(case.owner_id, str(case.now.tzinfo))
            if not case.memory_on:
                await services.memory_control.set_enabled(case.owner_id, False)
            replies, error = await _play(services, case, recorder, files)
        memories = await services.memories.export(case.owner_id)
    finally:
        # Not services.anthropic.close(): that would close the HTTP client the run shares.
        await services.voice.close()  # a transcriber's client, if TRANSCRIPTION_* are set
        await services.engine.dispose()
    return Transcript(replies, recorder.exchanges, seeds, memories, error)
