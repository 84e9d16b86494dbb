"""Files the bot does not read get a clear line, are not downloaded when that can be known,
and never leave a history the API would refuse."""

import base64

import pytest

from bot.telegram import texts
from tests.fakes.anthropic_server import error, text
from tests.fakes.media import sample_jpeg, sample_pdf, sample_png
from tests.files_support import (
    MB,
    calls_to,
    push_album_photo,
    push_document_fields,
    stored_contents,
    user_texts,
)
from tests.harness import OWNER


async def say_file(harness, push) -> list[str]:
    """Push a file message with push(), wait, and return the bot's replies to it."""
    before = len(harness.tg.sent)
    push()
    await harness.idle()
    return [m["result"]["text"] for m in harness.tg.sent[before:]]


async def test_a_file_over_telegrams_20_mb_is_refused_without_a_download(harness):
    tg = harness.tg
    fields = tg.add_file(size=25 * MB, file_name="scan.pdf", mime_type="application/pdf")
    replies = await say_file(harness, lambda: push_document_fields(tg, fields, caption="read"))
    assert replies == ["scan.pdf is 25.0 MB; Telegram lets me download files of at most 20 MB."]
    assert calls_to(tg, "getFile") == [] and tg.downloads == []
    assert harness.model.requests == []
    assert await stored_contents(harness.services.engine) == []


async def test_a_file_of_unknown_size_over_20_mb_is_refused_by_getfile(harness):
    tg = harness.tg
    fields = tg.add_file(size=21 * MB, file_name="scan.pdf", mime_type="application/pdf")
    del fields["file_size"]
    replies = await say_file(harness, lambda: push_document_fields(tg, fields))
    assert replies == ["scan.pdf is too big: Telegram lets me download files of at most 20 MB."]
    assert len(calls_to(tg, "getFile")) == 1 and tg.downloads == []
    assert harness.model.requests == []


async def test_an_image_over_the_api_limit_is_refused_before_or_after_download(harness):
    tg = harness.tg
    big = sample_png(100, 100, pad_to=4 * MB)
    line = (
        "big.png is 4.0 MB; I can read images of at most 3.75 MB. Send it as a photo "
        "(Telegram makes it smaller) or as a smaller file."
    )
    assert await say_file(harness, lambda: tg.push_document(OWNER, big, "big.png", "image/png"))
    assert tg.sent[-1]["result"]["text"] == line
    assert tg.downloads == []  # the size was known
    unsized = tg.add_file(big, file_name="big.png", mime_type="image/png")
    del unsized["file_size"]
    assert await say_file(harness, lambda: push_document_fields(tg, unsized)) == [line]
    assert len(tg.downloads) == 1  # unknown size: checked after the download
    assert harness.model.requests == []


async def test_a_photo_under_the_limit_is_taken_from_its_sizes(harness):
    """The largest size the API takes is chosen; if none fits, the photo is refused."""
    tg = harness.tg
    # The fake serves one file for all sizes; give the sizes different file sizes.
    update = tg.push_photo(OWNER, sample_jpeg(2560, 1920, pad_to=100_000))
    sizes = update["message"]["photo"]
    sizes[-1]["file_size"] = 5 * MB  # the original is too big for the API
    await harness.idle()
    assert tg.downloads == [sizes[-2]["file_id"]]
    assert len(harness.model.images()) == 1

    update = tg.push_photo(OWNER, sample_jpeg(300, 200), caption="this one?")
    for size in update["message"]["photo"]:
        size["file_size"] = 4 * MB
    await harness.idle()
    assert tg.sent[-1]["result"]["text"].startswith("photo.jpg is 4.0 MB; I can read images")
    assert len(tg.downloads) == 1 and len(harness.model.requests) == 1


@pytest.mark.parametrize(
    ("data", "name", "mime", "line"),
    [
        (b"PK\x03\x04", "notes.docx", "application/msword",
         "I can read photos, images (JPEG, PNG, GIF, WebP) and PDFs, not notes.docx."),
        (b"hello, I am text", "fake.png", "image/png",
         "fake.png is not a JPEG, PNG, GIF, WebP or PDF inside, so I can't read it."),
        (sample_png(9000, 20), "panorama.png", "image/png",
         "panorama.png is 9000 by 20 pixels; I can read images of at most 8000 pixels a side. "
         "Send it as a photo (Telegram makes it smaller)."),
        (sample_pdf(101), "book.pdf", "application/pdf",
         "book.pdf has 101 pages; I can read PDFs of at most 100 pages."),
        (b"", "empty.pdf", "application/pdf",
         "empty.pdf is not a JPEG, PNG, GIF, WebP or PDF inside, so I can't read it."),
    ],
)  # fmt: skip
async def test_files_the_bot_does_not_read_get_a_clear_line(harness, data, name, mime, line):
    tg = harness.tg
    replies = await say_file(harness, lambda: tg.push_document(OWNER, data, name, mime))
    assert replies == [line]
    assert harness.model.requests == []
    assert await stored_contents(harness.services.engine) == []
    assert tg.downloads == ([] if name.endswith(".docx") else [tg.downloads[0]])


async def test_a_file_named_wrongly_is_read_as_what_it_is(harness):
    tg, model = harness.tg, harness.model
    tg.push_document(OWNER, sample_jpeg(64, 64), "really.png", "image/png")
    await harness.idle()
    assert [i["source"]["media_type"] for i in model.images()] == ["image/jpeg"]
    # Without a type Telegram knows, the name tells; without either, it is not downloaded.
    tg.push_document(OWNER, sample_pdf(1), "scan.PDF", "application/octet-stream")
    await harness.idle()
    assert len(model.documents()) == 1
    replies = await say_file(
        harness, lambda: tg.push_document(OWNER, sample_pdf(1), "scan", "application/octet-stream")
    )
    assert replies == ["I can read photos, images (JPEG, PNG, GIF, WebP) and PDFs, not scan."]
    assert len(tg.downloads) == 2 and len(model.requests) == 2
    assert model.invalid == []


async def test_a_file_the_api_refuses_is_left_out_and_the_chat_goes_on(harness):
    tg, model = harness.tg, harness.model
    model.script(error(400, "invalid_request_error", "Could not process PDF"))
    broken = b"%PDF-1.7\n" + bytes(range(256)) * 4
    tg.push_document(OWNER, broken, "broken.pdf", "application/pdf", caption="what is this?")
    await harness.idle()
    assert tg.sent[-1]["result"]["text"] == (
        "The model couldn't read broken.pdf (Could not process PDF), so I've left it out of "
        "our conversation. A screenshot or another format may work."
    )
    replies = await harness.say(OWNER, "ok, never mind. Hello!")
    assert replies == ["OK"]
    follow_up = model.last_request
    assert model.documents() == [] and model.invalid == []
    texts = user_texts(follow_up)
    assert "[document: broken.pdf; the model could not read it]" in texts
    assert "what is this?" in texts and "Hello!" in texts
    # The note is the stored answer, so a restart does not answer the message again.
    assert [m["role"] for m in follow_up["messages"]] == ["user", "assistant", "user"]
    [user, *_] = await stored_contents(harness.services.engine)
    assert [b["type"] for b in user] == ["text", "text"]


async def test_another_refusal_keeps_the_file(harness):
    model = harness.model
    model.script(error(400, "invalid_request_error", "max_tokens: too large for this model"))
    harness.tg.push_photo(OWNER, sample_png(30, 30), caption="hi")
    await harness.idle()
    assert harness.tg.sent[-1]["result"]["text"].startswith("Sorry, I can't reach the model")
    await harness.say(OWNER, "again")
    assert len(model.images()) == 1  # not the file's fault: it is still there


async def test_a_strangers_file_is_never_downloaded(harness):
    tg = harness.tg
    stranger = 999
    tg.push_photo(stranger, sample_png(40, 40), caption="what's this?")
    tg.push_document(stranger, sample_pdf(1), "x.pdf", "application/pdf")
    tg.push_photo(-500, sample_png(40, 40), caption="@memory_test_bot look", chat_type="group",
                  user_id=stranger, first_name="Eve")  # fmt: skip
    await harness.idle()
    assert calls_to(tg, "getFile") == [] and tg.downloads == []
    assert harness.model.requests == []
    # Told once per chat (the private chat and the group), and nothing else.
    assert all("private bot" in m["result"]["text"] for m in tg.sent) and len(tg.sent) == 2


async def test_video_audio_and_stickers_keep_their_one_line_answer(harness):
    # Voice notes and round videos are transcribed, or answered with how to turn that on
    # (tests/test_voice.py).
    for kind in ("video", "sticker", "audio", "animation"):
        replies = await say_file(harness, lambda kind=kind: harness.tg.push_media(OWNER, kind))
        assert replies == [texts.NOT_TEXT], kind
    assert harness.tg.downloads == [] and harness.model.requests == []


async def test_a_caption_with_only_a_mention_in_a_group_is_answered(harness):
    model = harness.model
    model.script(text("A cat on a sofa."))
    harness.tg.push_photo(-600, sample_png(80, 60), caption="@memory_test_bot",
                          chat_type="group", user_id=OWNER, first_name="Ann")  # fmt: skip
    harness.tg.push_photo(-600, sample_png(80, 60), chat_type="group", user_id=OWNER)
    await harness.idle()
    assert [m["result"]["text"] for m in harness.tg.sent] == ["A cat on a sofa."]
    assert len(model.requests) == 1 and len(model.images()) == 1
    assert "; from Ann]" in model.last_user_text().splitlines()[0]
    assert len(harness.tg.downloads) == 1  # the photo not meant for the bot was not fetched


async def test_one_photo_the_api_refuses_leaves_the_rest_of_its_album_answered(harness):
    tg, model = harness.tg, harness.model
    photos = [sample_png(40 + i, 30) for i in range(3)]

    def refuse_the_second(request):
        """Refuse the second photo as the API does: its block's field path, then the reason."""
        for i, message in enumerate(request["messages"]):
            for j, block in enumerate(message["content"]):
                data = block.get("source", {}).get("data")
                if block["type"] == "image" and base64.b64decode(data) == photos[1]:
                    where = f"messages.{i}.content.{j}.image.source.base64.data"
                    return error(400, "invalid_request_error", f"{where}: Could not process image")
        return text("not refused?")

    model.script(refuse_the_second, text("Two receipts: 12.00 and 30.00."))
    push_album_photo(tg, OWNER, photos[0], "album-r", caption="add these up")
    for photo in photos[1:]:
        push_album_photo(tg, OWNER, photo, "album-r")
    [reply] = await tg.wait_for_messages(OWNER, 1)
    await harness.idle()
    assert reply["result"]["text"] == (
        "Two receipts: 12.00 and 30.00.\n\nThe model couldn't read photo.jpg, number 2 of the 3 "
        "files you sent (Could not process image), so I've left it out of our conversation. "
        "A screenshot or another format may work."
    )
    assert len(model.requests) == 2 and model.image_data() == [photos[0], photos[2]]
    assert "[image: photo.jpg; the model could not read it]" in user_texts(model.last_request)
    # The rest stay in the conversation; the refused one never comes back.
    await harness.say(OWNER, "and the total?")
    assert model.image_data() == [photos[0], photos[2]] and model.invalid == []
