"""FakeAnthropic accepts and refuses image and PDF blocks as the real API does."""

import base64

import anthropic
import pytest

from tests.fakes.anthropic_media import (
    IMAGE_MAX_TOKENS,
    MAX_IMAGE_BASE64_BYTES,
    PDF_TOKENS_PER_PAGE,
    image_tokens,
)
from tests.fakes.anthropic_server import estimate_tokens, text
from tests.fakes.media import (
    image_size,
    pdf_page_count,
    sample_jpeg,
    sample_pdf,
    sample_png,
    sniff_image_type,
)
from tests.wire.requests import MODEL


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def image(data: bytes, media_type: str = "image/png") -> dict:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": media_type, "data": b64(data)},
    }


def pdf(data: bytes, **extra) -> dict:
    source = {"type": "base64", "media_type": "application/pdf", "data": b64(data)}
    return {"type": "document", "source": source} | extra


def ask(*blocks, question="What is this?"):
    content = [*blocks, {"type": "text", "text": question}]
    return {"model": MODEL, "max_tokens": 100, "messages": [{"role": "user", "content": content}]}


# --- the media reader ----------------------------------------------------------------------


def test_samples_are_read_back():
    assert image_size(sample_png(640, 480)) == (640, 480)
    assert image_size(sample_jpeg(1234, 567)) == (1234, 567)
    assert sniff_image_type(sample_jpeg()) == "image/jpeg"
    assert sniff_image_type(sample_png()) == "image/png"
    # A header cut short is no image, whatever its magic number says (the API cannot open it).
    assert sniff_image_type(b"GIF89a" + bytes(10)) is None
    assert sniff_image_type(b"RIFF\0\0\0\0WEBPVP8 ") is None
    assert image_size(sample_jpeg()[:20]) is None
    assert sniff_image_type(b"%PDF-1.4") is None
    assert len(sample_png(pad_to=100_000)) == 100_000
    assert pdf_page_count(sample_pdf(7)) == 7
    assert sample_pdf().startswith(b"%PDF-") and sample_pdf().endswith(b"%%EOF\n")


def test_image_tokens_follow_the_documented_rule():
    assert image_tokens(750, 100) == 100
    assert image_tokens(1092, 1092) == 1590  # the largest 1:1 image sent unscaled
    assert image_tokens(4000, 3000) <= IMAGE_MAX_TOKENS
    assert image_tokens(3000, 200) == image_tokens(1568, 104)  # long edge scaled to 1568


# --- accepted ------------------------------------------------------------------------------


async def test_image_and_pdf_reach_the_model_and_are_inspectable(fa, claude):
    photo, scan = sample_png(800, 600), sample_jpeg(200, 150)
    paper = pdf(sample_pdf(3), title="Paper", context="From the user", citations={"enabled": True})
    fa.script(text("A chart."))
    message = await claude.messages.create(**ask(image(photo), image(scan, "image/jpeg"), paper))
    assert message.content[0].text == "A chart."
    assert fa.image_data() == [photo, scan]
    assert [d["title"] for d in fa.documents()] == ["Paper"]
    assert fa.last_user_text() == "What is this?"
    media = image_tokens(800, 600) + image_tokens(200, 150) + 3 * PDF_TOKENS_PER_PAGE
    assert media < message.usage.input_tokens < media + 200


async def test_other_sources_are_accepted(fa, claude):
    blocks = [
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
        {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}},
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "Plain notes"},
            "cache_control": {"type": "ephemeral"},
        },
    ]
    await claude.messages.create(**ask(*blocks))
    assert len(fa.images()) == 1 and len(fa.documents()) == 2 and fa.image_data() == []


async def test_images_inside_tool_results_are_validated_and_listed(fa, claude):
    call = {"type": "tool_use", "id": "t1", "name": "screenshot", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [image(sample_png())]}
    messages = [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]
    await claude.messages.create(model=MODEL, max_tokens=10, messages=messages)
    assert fa.image_data() == [sample_png()]
    result["content"] = [image(b"not an image")]
    with pytest.raises(anthropic.BadRequestError, match=r"2\.content\.0\.tool_result\.content\.0"):
        await claude.messages.create(model=MODEL, max_tokens=10, messages=messages)


def test_media_is_counted_by_rule_not_by_base64_size():
    big = sample_png(100, 100, pad_to=3_000_000)
    tokens = estimate_tokens(ask(image(big)))
    assert image_tokens(100, 100) <= tokens < image_tokens(100, 100) + 100


# --- refused -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (
            image(sample_png(), "image/bmp"),
            "messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', "
            "'image/png', 'image/gif' or 'image/webp'",
        ),
        (
            image(sample_png(), "image/jpeg"),
            "messages.0.content.0.image.source.base64.data: Image does not match the provided "
            "media type image/jpeg",
        ),
        (
            image(sample_png(8001, 10)),
            "image.source.base64.data: At least one of the image dimensions exceed max allowed "
            "size: 8000 pixels",
        ),
        (image(b"plain text, not a picture"), "Could not process image"),
        (pdf(b"<html>not a pdf</html>"), "Could not process PDF"),
        (
            pdf(sample_pdf(101)),
            "messages.0.content.0.pdf.source.base64.data: A maximum of 100 PDF pages may be "
            "provided.",
        ),
        (
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "text/html", "data": ""},
            },
            "media_type: Input should be 'application/pdf'",
        ),
        ({"type": "image", "source": {"type": "url", "url": "ftp://x"}}, "valid URL"),
        ({"type": "image", "source": {"type": "path"}}, "does not match any of the expected tags"),
    ],
)
async def test_bad_media_is_refused_with_the_api_wording(fa, claude, block, expected):
    with pytest.raises(anthropic.BadRequestError) as caught:
        await claude.messages.create(**ask(block))
    assert expected in caught.value.api_message
    assert fa.invalid[-1][1] == caught.value.api_message


async def test_per_image_limit_is_on_the_base64_text(fa, claude):
    fits = sample_png(pad_to=MAX_IMAGE_BASE64_BYTES // 4 * 3)  # exactly 5 MB once encoded
    await claude.messages.create(**ask(image(fits)))
    over = sample_png(pad_to=MAX_IMAGE_BASE64_BYTES // 4 * 3 + 3)
    with pytest.raises(anthropic.BadRequestError) as caught:
        await claude.messages.create(**ask(image(over)))
    assert caught.value.api_message == (
        "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: "
        "5242884 bytes > 5242880 bytes"
    )


async def test_pdf_pages_count_across_the_request(fa, claude):
    await claude.messages.create(**ask(pdf(sample_pdf(60))))
    with pytest.raises(anthropic.BadRequestError, match="A maximum of 100 PDF pages"):
        await claude.messages.create(**ask(pdf(sample_pdf(60)), pdf(sample_pdf(41))))


async def test_media_only_in_user_messages(fa, claude):
    messages = [
        {"role": "user", "content": "draw"},
        {"role": "assistant", "content": [image(sample_png())]},
        {"role": "user", "content": "thanks"},
    ]
    with pytest.raises(anthropic.BadRequestError, match="only be in user messages"):
        await claude.messages.create(model=MODEL, max_tokens=10, messages=messages)


async def test_request_over_32_mb_is_too_large(fa, claude):
    # Seven images at the per-image limit are each valid; together they exceed 32 MB.
    chunk = sample_png(pad_to=MAX_IMAGE_BASE64_BYTES // 4 * 3)
    with pytest.raises(anthropic.ContentTooLargeError) as caught:
        await claude.messages.create(**ask(*[image(chunk)] * 7))
    assert caught.value.type == "request_too_large"
    assert caught.value.api_message == "Request exceeds the maximum size"
    with pytest.raises(anthropic.ContentTooLargeError):
        await claude.messages.count_tokens(
            model=MODEL, messages=ask(*[image(chunk)] * 7)["messages"]
        )
