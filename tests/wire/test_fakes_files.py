"""FakeTelegram's files and incoming media, through PTB's real Bot and download code."""

import aiohttp
import pytest
from telegram import Message
from telegram.error import BadRequest

from bot.app import file_base_url
from tests.fakes.media import sample_jpeg, sample_pdf, sample_png
from tests.fakes.telegram_files import MAX_DOWNLOAD_BYTES


async def received(bot) -> Message:
    """Return the message of the one pending update, read by PTB, and confirm the update."""
    (update,) = await bot.get_updates(timeout=1)
    await bot.get_updates(offset=update.update_id + 1, timeout=0)
    return update.message


async def test_get_file_and_download_round_trip(tg, bot):
    assert file_base_url(tg.base_url) == tg.base_file_url
    data = sample_pdf(2)
    fields = tg.add_file(data, mime_type="application/pdf", file_name="notes.pdf")
    assert fields["file_size"] == len(data) and fields["file_name"] == "notes.pdf"
    file = await bot.get_file(fields["file_id"])
    assert file.file_size == len(data) and file.file_unique_id == fields["file_unique_id"]
    assert file.file_path == f"{tg.base_file_url}{tg.token}/documents/file_1.pdf"
    assert tg.downloads == []
    assert await file.download_as_bytearray() == bytearray(data)
    assert tg.downloads == [fields["file_id"]]


async def test_files_over_20_mb_cannot_be_fetched(tg, bot):
    big = tg.add_file(size=MAX_DOWNLOAD_BYTES + 1, mime_type="video/mp4")
    with pytest.raises(BadRequest, match="File is too big"):
        await bot.get_file(big["file_id"])
    limit = tg.add_file(size=MAX_DOWNLOAD_BYTES)
    assert (
        len(await (await bot.get_file(limit["file_id"])).download_as_bytearray())
        == limit["file_size"]
    )
    with pytest.raises(BadRequest, match="Invalid file_id"):
        await bot.get_file("AgADnope")
    assert [m for m, _, _ in tg.rejected] == ["getFile", "getFile"]


async def test_download_route_refuses_unknown_paths_and_tokens(tg, bot):
    fields = tg.add_file(b"secret", file_name="a.txt")
    path = (await bot.get_file(fields["file_id"])).file_path.rsplit(tg.token + "/", 1)[1]
    async with aiohttp.ClientSession() as session:
        for token, file_path in (("1:WRONG", path), (tg.token, "documents/none.txt")):
            async with session.get(f"{tg.base_file_url}{token}/{file_path}") as response:
                assert response.status == 404
                assert (await response.json())["description"] == "Not Found"
        async with session.get(f"{tg.base_file_url}{tg.token}/{path}") as response:
            assert await response.read() == b"secret"
    assert tg.downloads == [fields["file_id"]]


async def test_push_photo_lists_sizes_up_to_the_original(tg, bot):
    data = sample_jpeg(1600, 1200)
    tg.push_photo(42, data, caption="Look @alice_b")
    message = await received(bot)
    sizes = [(p.width, p.height) for p in message.photo]
    assert sizes == [(90, 68), (320, 240), (800, 600), (1280, 960), (1600, 1200)]
    assert len({p.file_id for p in message.photo}) == 5
    assert message.caption == "Look @alice_b" and message.caption_entities[0].type == "mention"
    largest = await bot.get_file(message.photo[-1])
    assert await largest.download_as_bytearray() == bytearray(data)
    assert tg.downloads == [message.photo[-1].file_id]


async def test_push_photo_small_image_and_explicit_size(tg, bot):
    tg.push_photo(42, sample_png(60, 40))
    assert [(p.width, p.height) for p in (await received(bot)).photo] == [(60, 40)]
    tg.push_photo(42, b"opaque", width=5000, height=2500)
    sizes = [(p.width, p.height) for p in (await received(bot)).photo]
    assert sizes[-1] == (2560, 1280) and sizes[0] == (90, 45)


async def test_push_document_is_a_downloadable_file(tg, bot):
    data = sample_pdf(3)
    tg.push_document(-100500, data, "paper.pdf", "application/pdf", caption="read this",
                     chat_type="supergroup", user_id=7, first_name="Bob")  # fmt: skip
    message = await received(bot)
    document = message.document
    assert (document.file_name, document.mime_type, document.file_size) == (
        "paper.pdf", "application/pdf", len(data),
    )  # fmt: skip
    assert message.caption == "read this" and message.from_user.first_name == "Bob"
    assert message.chat.type == "supergroup"
    assert await (await document.get_file()).download_as_bytearray() == bytearray(data)


@pytest.mark.parametrize(
    ("kind", "check"),
    [
        ("voice", lambda m: m.voice.duration == 2 and m.voice.mime_type == "audio/ogg"),
        ("video", lambda m: (m.video.width, m.video.height) == (1280, 720)),
        ("sticker", lambda m: m.sticker.emoji == "👍" and m.sticker.type == "regular"),
        ("video_note", lambda m: m.video_note.length == 384),
        ("audio", lambda m: m.audio.title == "Song"),
        ("animation", lambda m: m.animation.duration == 3 and m.document is not None),
    ],
)
async def test_push_media_builds_what_ptb_reads(tg, bot, kind, check):
    tg.push_media(42, kind, caption="hey" if kind != "sticker" else None)
    message = await received(bot)
    assert check(message), message
    media = getattr(message, kind)
    assert media.file_size == 1000
    assert len(await (await bot.get_file(media.file_id)).download_as_bytearray()) == 1000


async def test_push_media_fields_override_and_unknown_kind(tg, bot):
    tg.push_media(42, "voice", data=b"OggS voice", fields={"duration": 61})
    message = await received(bot)
    assert message.voice.duration == 61 and message.voice.file_size == len(b"OggS voice")
    with pytest.raises(ValueError, match="unknown media kind"):
        tg.push_media(42, "hologram")


async def test_sent_documents_can_be_fetched_back(tg, bot):
    sent = await bot.send_document(42, b"export", filename="memory.json")
    file = await bot.get_file(sent.document.file_id)
    assert await file.download_as_bytearray() == bytearray(b"export")
    again = await bot.send_document(42, sent.document.file_id)
    assert again.document.file_unique_id == sent.document.file_unique_id
