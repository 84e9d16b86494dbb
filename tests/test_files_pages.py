"""A PDF's real page count reaches every limit, and a prompt over the model's context window
leaves the newest file out with a note, never a false "can't reach the model"."""

from pathlib import Path

from bot.conversations.file_refs import PDF_PAGE_TOKENS
from tests.fakes.anthropic_server import text
from tests.fakes.media import sample_pdf, sample_png
from tests.files_support import stored_contents, user_texts
from tests.harness import OWNER

DATA = Path(__file__).parent / "data"
# PDF 1.5 with object streams (as pdflatex writes them): no page object is visible in the bytes.
NINE_PAGES = (DATA / "objstm-9-pages.pdf").read_bytes()
MANY_PAGES = (DATA / "objstm-120-pages.pdf").read_bytes()


async def replies_to(bot, push) -> list[str]:
    """Push a message with push(), wait, and return the bot's replies to it."""
    before = len(bot.tg.sent)
    push()
    await bot.idle()
    return [m["result"]["text"] for m in bot.tg.sent[before:]]


def push_pdf(bot, data: bytes, name: str = "paper.pdf", caption: str | None = "summary?"):
    return lambda: bot.tg.push_document(OWNER, data, name, "application/pdf", caption=caption)


async def test_pages_in_object_streams_are_counted_for_the_page_limit(harness):
    assert b"/Type /Page" not in MANY_PAGES and b"/Count" not in MANY_PAGES
    replies = await replies_to(harness, push_pdf(harness, MANY_PAGES, "thesis.pdf"))
    assert replies == ["thesis.pdf has 120 pages; I can read PDFs of at most 100 pages."]
    assert harness.model.requests == []
    assert await stored_contents(harness.services.engine) == []


async def test_pages_in_object_streams_count_toward_the_history_budget(start_bot):
    bot = await start_bot(history_token_budget=24_000)
    model = bot.model
    model.default = lambda request: (
        text("The user shared a paper.") if isinstance(request.get("system"), str) else text("ok")
    )
    assert await replies_to(bot, push_pdf(bot, NINE_PAGES)) == ["ok"]
    [user, _] = await stored_contents(bot.services.engine)
    assert user[0]["pages"] == 9
    snapshot = await bot.services.conversations.snapshot(1)
    assert snapshot.turns[0].tokens >= 9 * PDF_PAGE_TOKENS  # over the budget on its own
    # So the next message folds it into the summary instead of sending it again.
    await bot.say(OWNER, "thanks")
    assert "[document: paper.pdf]" in model.requests[1]["messages"][0]["content"]
    assert model.documents() == [] and model.invalid == []


async def test_a_new_file_over_the_context_window_is_left_out_with_a_note(harness):
    model = harness.model
    model.context_window = 20_000  # the paper alone is about 28,000 tokens
    [note] = await replies_to(harness, push_pdf(harness, NINE_PAGES))
    assert note.startswith("With paper.pdf our conversation is too long for the model (prompt is")
    assert "so I've left it out" in note and "/new" in note
    assert "can't reach the model" not in note
    assert len(model.too_long) == 1  # not retried without the file: the note is the answer
    assert await harness.say(OWNER, "ok, what about the weather?") == ["OK"]
    texts = user_texts(model.last_request)
    assert "[document: paper.pdf; left out: too long for the model]" in texts
    assert "summary?" in texts and model.documents() == []
    assert [m["role"] for m in model.last_request["messages"]] == ["user", "assistant", "user"]


async def test_an_older_file_over_the_context_window_gives_way_and_the_message_is_answered(
    harness,
):
    model = harness.model
    model.script(text("A receipt and a paper."))
    harness.tg.push_photo(OWNER, sample_png(60, 40), caption="keep these")
    await harness.idle()
    await replies_to(harness, push_pdf(harness, sample_pdf(2), "old.pdf", caption=None))
    model.context_window = 7_000  # the instructions and tools take ~5,400; the 2-page PDF ~6,200
    model.script(text("It was about invoices."))
    [reply] = await replies_to(harness, lambda: harness.tg.push_message(OWNER, "what was it?"))
    assert reply.startswith("It was about invoices.\n\nWith old.pdf our conversation is too long")
    assert len(model.images()) == 1 and model.documents() == []  # only the newest file went
    assert "[document: old.pdf; left out: too long for the model]" in user_texts(model.last_request)


async def test_a_conversation_over_the_window_without_files_says_so(harness):
    harness.model.context_window = 10  # nothing fits
    [reply] = await harness.say(OWNER, "hello")
    assert reply.startswith("Our conversation is too long for the model (prompt is too long:")
    assert "/new" in reply and "can't reach the model" not in reply


async def test_when_leaving_files_out_is_not_enough_the_reply_says_the_conversation_is_too_long(
    harness,
):
    for n in range(7):
        harness.tg.push_photo(OWNER, sample_png(60 + n, 40), caption=f"photo {n}")
        await harness.idle()
    harness.model.context_window = 10  # nothing fits, with or without the photos
    [reply] = await harness.say(OWNER, "and now?")
    assert reply.endswith("Send /new to start a new one; your memories stay.")
    assert reply.count("so I've left it out") == 5 and "can't reach the model" not in reply
