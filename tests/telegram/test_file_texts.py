"""The agent's notices about files, worded for the user in the Telegram layer."""

import pytest

from bot.media.notices import (
    ConversationTooLong,
    FilesLeftOut,
    FilesOverBudget,
    LeftOutFile,
    LeftOutWhy,
    Refusal,
    RefusalKind,
)
from bot.telegram.chat.file_texts import notice_text, refusal_text

MB = 1024 * 1024


@pytest.mark.parametrize("kind", list(RefusalKind))
def test_every_refusal_names_the_file(kind):
    refusal = Refusal(kind, "scan `1`.pdf", 30 * MB, limit=20 * MB, pages=120, width=9000)
    text = refusal_text(refusal)
    assert "`scan '1'.pdf`" in text
    assert text.endswith(".")


def test_refusals_give_their_figures():
    pages = Refusal(RefusalKind.TOO_MANY_PAGES, "a.pdf", 10, limit=100, pages=120)
    assert refusal_text(pages) == "`a.pdf` has 120 pages; I can read PDFs of at most 100 pages."
    fetch = Refusal(RefusalKind.TOO_BIG_TO_DOWNLOAD, "b.pdf", 25 * MB, limit=20 * MB)
    assert "25.0 MB" in refusal_text(fetch) and "at most 20 MB" in refusal_text(fetch)
    unknown_size = Refusal(RefusalKind.TOO_BIG_TO_DOWNLOAD, "b.pdf", limit=20 * MB)
    assert refusal_text(unknown_size).startswith("`b.pdf` is too big:")


def test_notices_after_a_request_say_which_files_and_why():
    files = (LeftOutFile("a.png"), LeftOutFile("photo.jpg", 2, 3))
    unreadable = FilesLeftOut(LeftOutWhy.UNREADABLE, files, "Could not process image")
    assert notice_text(unreadable).startswith(
        "The model couldn't read `a.png`, `photo.jpg`, number 2 of the 3 files you sent (Could "
        "not process image), so I've left them"
    )
    too_long = FilesLeftOut(LeftOutWhy.TOO_LONG, (LeftOutFile("p.pdf"),), "prompt is too long")
    assert "so I've left it out" in notice_text(too_long) and "/new" in notice_text(too_long)
    assert "/new" in notice_text(ConversationTooLong("prompt is too long"))
    assert "only 3 of the 5 files" in notice_text(FilesOverBudget(2, 5))
