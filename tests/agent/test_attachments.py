"""Files in the agent: reading bytes, the local cache, request assembly and token counts."""

import base64
import hashlib
import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import httpx2
import pytest
from anthropic import BadRequestError

from bot.agent.request import build_request
from bot.agent.user_turn import IncomingMessage, user_turn_content
from bot.conversations.blocks import Content, FileKind, Role, text_block
from bot.conversations.content import block_text, content_tokens
from bot.conversations.file_refs import (
    IMAGE_MAX_TOKENS,
    PDF_PAGE_TOKENS,
    FileRef,
    file_ref,
    image_tokens,
)
from bot.conversations.snapshot import StoredTurn
from bot.media import media
from bot.media.attachments import (
    MAX_IMAGE_BYTES,
    MAX_PDF_PAGES,
    FileRefused,
    Files,
    FileUnavailable,
    IncomingFile,
    inspect,
)
from bot.media.file_cache import FileCache
from bot.media.notices import RefusalKind
from bot.media.unreadable import api_reason, is_prompt_too_long, to_leave_out
from memory.tokens import count_tokens
from memory.tools import MEMORY_TOOLS, tool_definitions
from tests.fakes.media import sample_jpeg, sample_pdf, sample_png

DATA = Path(__file__).parent.parent / "data"


def image_ref(n: int, side: int = 100) -> FileRef:
    return FileRef(FileKind.IMAGE, media.PNG, f"p{n}.png", f"id{n}", f"{n:064x}", 10, side, side)


def pdf_ref(n: int, pages: int) -> FileRef:
    return FileRef(
        FileKind.DOCUMENT, media.PDF, f"d{n}.pdf", f"id{n}", f"{n:064x}", 10, pages=pages
    )


def user_with(*refs: FileRef, words: str = "look") -> tuple[Role, Content]:
    return ("user", [*(ref.block() for ref in refs), text_block(words)])


def request(turns, files, tools=None):
    return build_request(
        model="m",
        max_tokens=100,
        tools=tool_definitions(MEMORY_TOOLS) if tools is None else tools,
        memory_block="## Your Memory\n\nblock",
        summary=None,
        turns=turns,
        files=files,
    )


def kinds(req) -> list[str]:
    return [b["type"] for m in req["messages"] for b in m["content"]]


# --- reading bytes -------------------------------------------------------------------------


def test_types_and_sizes_are_read_from_the_bytes():
    assert media.sniff_type(sample_png(3, 4)) == media.PNG
    assert media.image_size(sample_png(640, 480), media.PNG) == (640, 480)
    assert media.image_size(sample_jpeg(1234, 567), media.JPEG) == (1234, 567)
    gif = b"GIF89a" + (300).to_bytes(2, "little") + (200).to_bytes(2, "little") + bytes(8)
    assert media.sniff_type(gif) == media.GIF and media.image_size(gif, media.GIF) == (300, 200)
    lossless = b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f" + ((99) | (49 << 14)).to_bytes(4, "little")
    assert media.image_size(lossless, media.WEBP) == (100, 50)
    assert media.sniff_type(b"%PDF-1.7") == media.PDF and media.sniff_type(b"GIF90a") is None
    assert media.image_size(b"\xff\xd8\xff\xe0", media.JPEG) is None  # cut short
    assert media.pdf_pages(sample_pdf(4)) == 4
    assert media.pdf_pages(b"%PDF-1.5 /Type /Pages /Count 12 /Count 3") == 12  # unparsable


def test_pages_in_compressed_object_streams_are_counted():
    nine = (DATA / "objstm-9-pages.pdf").read_bytes()
    assert b"/Type /Page" not in nine and b"/ObjStm" in nine
    assert media.pdf_pages(nine) == 9
    assert media.pdf_pages((DATA / "objstm-120-pages.pdf").read_bytes()) == 120
    # Cut short, the page tree cannot be found: counted high, never as one page.
    assert media.pdf_pages(nine[: len(nine) // 3]) >= media.UNSURE_PAGES


def test_a_jpeg_header_walk_is_bounded():
    sof = b"\xff\xc0" + bytes([0, 11, 8, 0, 48, 0, 64, 1, 1, 0x11, 0])
    # Fill bytes before a marker are skipped in one step, however many there are.
    filled = b"\xff\xd8" + b"\xff" * 3_000_000 + sof
    assert media.image_size(filled, media.JPEG) == (64, 48)
    # A crafted run of empty segments is not walked to its end: the size is left unknown.
    segments = b"\xff\xd8" + b"\xff\xfe\x00\x02" * (media.MAX_JPEG_SEGMENTS + 1) + sof
    assert media.image_size(segments, media.JPEG) is None


def test_a_page_count_of_thousands_of_digits_is_refused_as_too_many_pages():
    hostile = b"%PDF-1.5 /Type /Pages /Count " + b"9" * 5000
    with pytest.raises(FileRefused) as refused:
        inspect(IncomingFile("f9", "paper.pdf", media.PDF, len(hostile)), hostile)
    assert refused.value.refusal.kind == RefusalKind.TOO_MANY_PAGES
    assert refused.value.refusal.limit == MAX_PDF_PAGES


def test_inspect_trusts_the_bytes_over_the_name():
    jpeg = sample_jpeg(800, 600)
    ref = inspect(IncomingFile("f1", "x.png", media.PNG, len(jpeg)), jpeg)
    image = (FileKind.IMAGE, media.JPEG, 800, 600)
    assert (ref.kind, ref.media_type, ref.width, ref.height) == image
    pdf = inspect(IncomingFile("f2", "a.jpg", media.JPEG), sample_pdf(3))
    assert (pdf.kind, pdf.pages, pdf.name) == (FileKind.DOCUMENT, 3, "a.jpg")
    # A header we cannot read is left to the API, at the highest token estimate.
    odd = inspect(IncomingFile("f3", "odd.jpg"), b"\xff\xd8\xff\x00")
    assert odd.width is None and odd.tokens == IMAGE_MAX_TOKENS
    # The limit is 5 MB of base64: 3.75 MB of file, exactly.
    assert len(base64.b64encode(bytes(MAX_IMAGE_BYTES))) == 5 * 1024 * 1024


# --- the local cache -----------------------------------------------------------------------


async def test_the_cache_keeps_files_by_hash_and_drops_the_least_recently_used(tmp_path):
    cache = FileCache(tmp_path / "files", max_bytes=250)
    blobs = {name: name.encode() * 20 for name in ("aaaaa", "bbbbb", "ccccc")}  # 100 bytes each
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in blobs.items()}
    await cache.put(digests["aaaaa"], blobs["aaaaa"])
    await cache.put(digests["bbbbb"], blobs["bbbbb"])
    os.utime(tmp_path / "files" / digests["aaaaa"], (1, 1))
    os.utime(tmp_path / "files" / digests["bbbbb"], (2, 2))
    assert await cache.get(digests["aaaaa"]) == blobs["aaaaa"]  # used: now the newest
    await cache.put(digests["ccccc"], blobs["ccccc"])
    assert await cache.get(digests["bbbbb"]) is None  # the least recently used went
    assert await cache.get(digests["ccccc"]) == blobs["ccccc"]
    assert cache.total_bytes() == 200 <= cache.max_bytes


async def test_the_cache_refuses_damage_oversize_and_odd_names(tmp_path):
    cache = FileCache(tmp_path, max_bytes=100)
    data = b"x" * 50
    digest = hashlib.sha256(data).hexdigest()
    await cache.put(digest, data)
    (tmp_path / digest).write_bytes(b"y" * 50)  # damaged on disk
    assert await cache.get(digest) is None and not (tmp_path / digest).exists()
    await cache.put("0" * 64, b"z" * 101)  # larger than the whole cache
    await cache.put("../escape", b"z")
    assert await cache.get("../escape") is None and cache.total_bytes() == 0
    off = FileCache(tmp_path / "off", max_bytes=0)
    await off.put(digest, data)
    assert await off.get(digest) is None and not (tmp_path / "off").exists()


# --- request assembly ----------------------------------------------------------------------


def test_files_become_api_blocks_the_same_on_every_request():
    turns = [
        user_with(image_ref(1), pdf_ref(2, 3)),
        ("assistant", [{"type": "text", "text": "seen"}]),
        ("user", [{"type": "text", "text": "and?"}]),
    ]
    files = {image_ref(1).sha256: "aW1n", pdf_ref(2, 3).sha256: "cGRm"}
    first, again = request(turns, files), request(turns, dict(files))
    assert first["messages"][0] == again["messages"][0]
    image, document, _ = first["messages"][0]["content"]
    assert image == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "aW1n"},
    }
    assert document["title"] == "d2.pdf" and document["source"]["data"] == "cGRm"
    assert turns[0][1][0]["type"] == "file"  # the stored turn is untouched
    assert first["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_a_request_keeps_the_newest_files_within_the_apis_limits():
    refs = [image_ref(n) for n in range(21)]
    turns = []
    for ref in refs:
        turns += [user_with(ref), ("assistant", [{"type": "text", "text": "ok"}])]
    turns.append(user_with(pdf_ref(90, 60)))
    turns.append(user_with(pdf_ref(91, 60)))
    files = {ref.sha256: "AAAA" for ref in [*refs, pdf_ref(90, 60), pdf_ref(91, 60)]}
    req = request(turns, files)
    assert kinds(req).count("image") == 20 and kinds(req).count("document") == 1
    texts = [b.get("text", "") for m in req["messages"] for b in m["content"]]
    assert "[image: p0.png; left out: too many files]" in texts  # the oldest image
    assert "[document: d90.pdf; left out: too many files]" in texts  # 120 pages in all
    big = [replace(ref, size=12 * 1024 * 1024) for ref in refs[:3]]  # 16 MB of base64 each
    req = request([user_with(ref) for ref in big], {ref.sha256: "AAAA" for ref in big})
    assert kinds(req).count("image") == 1  # two would make too large a request


class Source:
    """A FileSource that serves bytes by id and counts what it was asked for."""

    max_bytes = 20 * 1024 * 1024

    def __init__(self, files: dict[str, bytes]):
        self.files, self.fetched = files, list[str]()

    async def fetch(self, file_id: str) -> bytes:
        self.fetched.append(file_id)
        if file_id not in self.files:
            raise FileUnavailable(file_id)
        return self.files[file_id]


async def test_payloads_load_only_the_files_a_request_can_carry(tmp_path):
    pdfs = {f"pdf{n}": sample_pdf(60, f"Document {n}") for n in range(3)}
    source = Source(pdfs)
    files = Files(source, FileCache(tmp_path, max_bytes=0))  # no cache: every load fetches
    refs = [
        await files.prepare(IncomingFile(file_id, f"{file_id}.pdf", media.PDF)) for file_id in pdfs
    ]
    turns = [StoredTurn(n, "user", [ref.block()]) for n, ref in enumerate(refs)]
    source.fetched.clear()
    found = await files.payloads(turns)
    assert source.fetched == ["pdf2"]  # 60 + 60 pages would be over 100: the older wait
    assert list(found) == [refs[2].sha256]
    del source.files["pdf2"]
    found = await files.payloads(turns)
    assert found == {refs[2].sha256: None, refs[1].sha256: base64.b64encode(pdfs["pdf1"]).decode()}


def test_a_file_that_is_gone_and_memory_off_still_make_valid_requests():
    turns = [user_with(image_ref(1)), user_with(image_ref(2))]
    req = request(turns, {image_ref(1).sha256: None, image_ref(2).sha256: "AAAA"}, tools=[])
    assert kinds(req) == ["text", "text", "image", "text"]
    assert req["messages"][0]["content"][0]["text"] == "[image: p1.png; no longer available]"


# --- counting and the summariser's transcript ----------------------------------------------


def test_files_are_counted_by_anthropics_rules_and_named_in_transcripts():
    assert image_tokens(750, 100) == 100
    assert image_tokens(1092, 1092) == 1590  # the largest square sent unscaled
    assert image_tokens(4000, 3000) <= IMAGE_MAX_TOKENS
    content = [pdf_ref(1, 3).block(), image_ref(2, 750).block(), {"type": "text", "text": "hi"}]
    words = "[document: d1.pdf]\n[image: p2.png]\nhi"
    assert content_tokens(content) == count_tokens(words) + 3 * PDF_PAGE_TOKENS + 750
    assert [block_text(b) for b in content] == words.split("\n")
    assert file_ref(content[0]) == pdf_ref(1, 3)


def test_a_turn_with_files_has_them_first_and_the_time_context_leads_its_text():
    now = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    content = user_turn_content(IncomingMessage("", sender_name="Bob"), now, [image_ref(1)])
    assert [b["type"] for b in content] == ["file", "text"]
    assert content[1]["text"] == "[Sunday, 01 March 2026, 09:00 UTC; from Bob]"


# --- refusals by the API -------------------------------------------------------------------


def bad_request(message: str) -> BadRequestError:
    response = httpx2.Response(400, request=httpx2.Request("POST", "http://api/v1/messages"))
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return BadRequestError(f"Error code: 400 - {body}", response=response, body=body)


@pytest.mark.parametrize(
    ("message", "reason", "blamed"),
    [
        ("messages.0.content.0.image.source.base64.data: Could not process image",
         "Could not process image", True),
        ("Could not process PDF", "Could not process PDF", True),
        ("A maximum of 100 PDF pages may be provided.",
         "A maximum of 100 PDF pages may be provided", True),
        ("max_tokens: must be at most 8192", "must be at most 8192", False),
    ],
)  # fmt: skip
def test_only_refusals_about_files_blame_the_new_files(message, reason, blamed):
    turns = [
        StoredTurn(1, "user", [image_ref(1).block(), {"type": "text", "text": "old"}]),
        StoredTurn(2, "assistant", [{"type": "text", "text": "seen"}]),
        StoredTurn(3, "user", [image_ref(2).block(), {"type": "text", "text": "a"}]),
        StoredTurn(4, "user", [{"type": "text", "text": "b"}]),
    ]
    error = bad_request(message)
    assert api_reason(error) == reason
    assert [t.id for t, _ in to_leave_out(turns, error, {}, {})] == ([3] if blamed else [])


def test_a_refusal_naming_one_block_leaves_out_only_that_file():
    first, second = image_ref(1), image_ref(2)
    turns = [StoredTurn(1, "user", [first.block(), second.block(), {"type": "text", "text": "a"}])]
    files = {first.sha256: "QUFB", second.sha256: "QkJC"}
    req = request([(t.role, t.content) for t in turns], files)
    error = bad_request("messages.0.content.1.image.source.base64.data: Could not process image")
    assert [ref.name for _, ref in to_leave_out(turns, error, req, files)] == ["p2.png"]


def test_a_prompt_too_long_leaves_out_the_newest_file_sent():
    turns = [
        StoredTurn(1, "user", [pdf_ref(1, 9).block(), {"type": "text", "text": "read"}]),
        StoredTurn(2, "assistant", [{"type": "text", "text": "done"}]),
        StoredTurn(3, "user", [image_ref(2).block(), {"type": "text", "text": "and"}]),
    ]
    files = {pdf_ref(1, 9).sha256: "QUFB", image_ref(2).sha256: None}  # the photo is gone
    error = bad_request("prompt is too long: 210000 tokens > 200000 maximum")
    assert is_prompt_too_long(error) and not is_prompt_too_long(bad_request("too long"))
    assert [ref.name for _, ref in to_leave_out(turns, error, {}, files)] == ["d1.pdf"]


def test_a_refusal_without_a_field_path_leaves_out_the_new_files_of_its_kind():
    photo, pdf = image_ref(1), pdf_ref(2, 3)
    turns = [
        StoredTurn(1, "user", [photo.block(), {"type": "text", "text": "a"}]),
        StoredTurn(2, "user", [pdf.block(), {"type": "text", "text": "b"}]),
    ]
    pdfs = to_leave_out(turns, bad_request("Could not process PDF"), {}, {})
    assert [ref.name for _, ref in pdfs] == ["d2.pdf"]
    both = to_leave_out(turns, bad_request("invalid base64 data"), {}, {})
    assert [ref.name for _, ref in both] == ["p1.png", "d2.pdf"]


def test_a_pdf_whose_count_took_too_long_is_estimated_high():
    """What Files.prepare falls back to after INSPECT_SECONDS: the raw bytes' estimate."""
    nine = (DATA / "objstm-9-pages.pdf").read_bytes()
    ref = inspect(IncomingFile("f9", "paper.pdf", media.PDF), nine, estimate_pages=True)
    assert ref.pages == media.UNSURE_PAGES  # never fewer pages than it may have
    plain = inspect(IncomingFile("f3", "plain.pdf", media.PDF), sample_pdf(3), True)
    assert plain.pages == 3  # without object streams the bytes show every page
