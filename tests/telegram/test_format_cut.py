"""Cutting a growing Markdown reply after its finished part, as drafts need."""

import random

import pytest

from bot.telegram.format import MAX_MESSAGE_LENGTH, html_to_plain, render_html, render_reply
from bot.telegram.format.cut import cut_finished
from bot.telegram.format.render import open_fence
from tests.fakes.telegram_server import utf16_len

PARAGRAPHS = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 10 for i in range(30))


def cut_all(markdown: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """Cut markdown until the rest fits, as drafts do; return the messages' HTML."""
    pieces, rest, floor = [], markdown, 0
    while (cut := cut_finished(rest, limit, floor)) is not None:
        [head] = render_reply(cut.head, limit)
        pieces.append(head)
        rest, floor = cut.reopen + rest[cut.resume :], len(cut.reopen)
    return pieces + render_reply(rest, limit)


def words(html_pieces: list[str]) -> list[str]:
    return " ".join(html_to_plain(p) for p in html_pieces).split()


def test_a_reply_that_fits_is_not_cut():
    assert cut_finished("short **reply**\n\nwith two paragraphs") is None
    assert cut_finished("x" * MAX_MESSAGE_LENGTH) is None


def test_a_long_reply_is_cut_at_a_paragraph_and_renders_as_the_whole():
    cut = cut_finished(PARAGRAPHS)
    assert cut is not None and cut.reopen == ""
    assert utf16_len(render_html(cut.head)) <= MAX_MESSAGE_LENGTH
    assert cut.head.endswith("amet ") and PARAGRAPHS[cut.resume :].startswith("Paragraph")
    assert utf16_len(render_html(cut.head)) > MAX_MESSAGE_LENGTH // 2
    pieces = cut_all(PARAGRAPHS)
    assert words(pieces) == words([render_html(PARAGRAPHS)])
    assert all(utf16_len(p) <= MAX_MESSAGE_LENGTH for p in pieces)


def test_a_line_break_wins_over_a_paragraph_too_early_in_the_message():
    text = "Intro\n\n" + "\n".join(f"line {i} " + "word " * 8 for i in range(200))
    cut = cut_finished(text)
    assert cut is not None and len(cut.head) > 3000
    assert text[cut.resume :].startswith("line ")


def test_a_code_fence_cut_in_two_is_reopened():
    code = "\n".join(f"x_{i} = {i} * 2  # the {i}th" for i in range(300))
    text = f"Here:\n\n```python\n{code}\n```\n\nThat is all."
    cut = cut_finished(text)
    assert cut is not None and cut.reopen == "```python\n"
    assert open_fence(cut.head) == "```python"
    pieces = cut_all(text)
    assert len(pieces) >= 2 and all(p.count("<pre>") == 1 for p in pieces[:-1])
    assert pieces[1].startswith('<pre><code class="language-python">x_')
    lines = "\n".join(html_to_plain(p) for p in pieces).splitlines()
    assert [line for line in lines if line.startswith("x_")] == code.splitlines()
    assert lines[-1] == "That is all."


def test_a_line_longer_than_a_message_is_cut_at_a_space_then_anywhere():
    spaced = "word " * 2000
    cut = cut_finished(spaced)
    assert cut is not None and cut.head.endswith("word") and spaced[cut.resume] == "w"
    assert words(cut_all(spaced)) == spaced.split()
    solid = "x" * 9000
    assert "".join(html_to_plain(p) for p in cut_all(solid)) == solid


def test_no_cut_falls_before_the_floor():
    text = "```\n" + "\n".join(f"code line number {i}" for i in range(400))
    cut = cut_finished(text, floor=4)
    assert cut is not None and cut.resume > 4 and cut.head.strip() != "```"


@pytest.mark.parametrize("seed", range(6))
def test_cutting_random_replies_loses_and_repeats_nothing(seed):
    rng = random.Random(seed)
    blocks = []
    for _ in range(rng.randint(40, 90)):
        kind = rng.choice(["para", "list", "code", "quote", "heading"])
        choices = ["alpha", "**beta**", "`gamma`", "_delta_"]
        words_ = " ".join(rng.choice(choices) for _ in range(30))
        if kind == "code":
            body = "\n".join(f"    call_{i}(x)" for i in range(rng.randint(1, 60)))
            blocks.append(f"```py\n{body}\n```")
        elif kind == "list":
            blocks.append("\n".join(f"- {words_[: rng.randint(10, 120)]}" for _ in range(5)))
        elif kind == "quote":
            blocks.append(f"> {words_}\n> {words_}")
        elif kind == "heading":
            blocks.append(f"## {words_[:40]}")
        else:
            blocks.append(words_)
    text = "\n\n".join(blocks)
    pieces = cut_all(text, limit=1000)
    assert all(utf16_len(p) <= 1000 for p in pieces)
    assert words(pieces) == words([render_html(text)])
