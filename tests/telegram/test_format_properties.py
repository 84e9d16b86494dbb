"""Properties of formatting over generated adversarial replies: valid pieces, linear work."""

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.telegram.format import (
    MAX_MESSAGE_LENGTH,
    html_to_plain,
    render_html,
    render_reply,
    split_html,
    split_plain,
)
from tests.fakes.telegram_server import utf16_len
from tests.perf.bench_format import CORPUS
from tests.telegram.test_format import assert_text_kept, is_empty_to_telegram, plain, validate

LIMITS = (32, 64, 300, MAX_MESSAGE_LENGTH)

# The adversarial alphabet: what a model's Markdown is made of, at its most confusing.
_BACKTICKS = st.integers(1, 40).map(lambda n: "`" * n)
_DELIMITER_RUNS = st.builds(lambda c, n: c * n, st.sampled_from("*_~"), st.integers(1, 12))
_NAMES = st.from_regex(r"_{1,2}[a-z]{1,5}(_[a-z0-9]{1,4}){1,3}(\.py)?_{0,2}", fullmatch=True)
_BRACKETS = st.sampled_from(
    ["[", "]", "(", ")", "[a](", "](", "](https://e.com/", "[link](https://e.com/a_(b))"]
)
_ESCAPES = st.sampled_from("\\`*_~[]()#+-.!>|a").map(lambda c: "\\" + c)
_URLS = st.builds(
    lambda scheme, part, n: f"{scheme}e.com/{part * n}",
    st.sampled_from(["http://", "https://", "_https://", "(https://"]),
    st.sampled_from(["a_", "(b)", "_(c)_", "x.", "d/", ")_", "%20"]),
    st.integers(0, 200),
)
_UNICODE = st.sampled_from(
    [
        "😀",
        "👨‍👩‍👧‍👦",
        "🇺🇦",
        "👍🏽",
        "e\u0301",
        "\u200d",
        "\ufe0f",
        "1\ufe0f\u20e3",
        "\u202e",
        "\u200f",
    ]
)
_SCRIPTS = st.sampled_from(["Ёлка", "中文", "क\u093f", "a" + "\u0301" * 20, "\u3000", "\u00a0"])
_LAYOUT = st.sampled_from(
    ["\n", "\n\n", " ", "  ", "\t", "> ", ">> ", "# ", "### ", "- ", "* ", "1. ", "---", "a"]
)
_FENCES_AND_HTML = st.sampled_from(
    ["```", "```python\n", "\n```\n", "~~~\n", "<", ">", "&", "&amp;", "<b>", "word "]
)
_FRAGMENT = st.one_of(
    _BACKTICKS,
    _DELIMITER_RUNS,
    _NAMES,
    _BRACKETS,
    _ESCAPES,
    _URLS,
    _UNICODE,
    _SCRIPTS,
    _LAYOUT,
    _FENCES_AND_HTML,
)
# Some replies are repeated to thousands of characters, so that splitting has work to do.
REPLIES = st.builds(
    lambda fragments, times: "".join(fragments) * times,
    st.lists(_FRAGMENT, max_size=60),
    st.sampled_from([1, 1, 1, 4, 12]),
)


@settings(
    max_examples=100,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(REPLIES)
def test_generated_replies_render_to_valid_pieces_that_keep_the_text(markdown):
    whole = html_to_plain(render_html(markdown))
    for limit in LIMITS:
        pieces = render_reply(markdown, limit)
        for piece in pieces:
            validate(piece, limit)
            # If Telegram refused the piece, the bot would send its text plainly, in parts.
            fallback = split_plain(html_to_plain(piece), limit)
            assert all(utf16_len(p) <= limit and not is_empty_to_telegram(p) for p in fallback)
            assert_text_kept(fallback, html_to_plain(piece))
        assert_text_kept(plain(pieces), whole)


def python_steps(function, *args) -> int:
    """Return how many Python lines and calls running function takes: work, not time."""
    steps = 0

    def trace(frame, event, arg):
        nonlocal steps
        steps += 1
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        function(*args)
    finally:
        sys.settrace(previous)
    return steps


def format_everything(markdown: str) -> None:
    """Render, split (even what fits in one message) and split the plain-text fallback."""
    html = render_html(markdown)
    split_html(html)
    split_plain(html_to_plain(html))


@pytest.mark.parametrize("name", list(CORPUS))
def test_formatting_work_grows_linearly_with_the_input(name):
    # Counted, not timed, so a busy machine cannot fail it; quadratic code would quadruple.
    build = CORPUS[name]
    small, large = (
        python_steps(format_everything, build(1024)),
        python_steps(format_everything, build(2048)),
    )
    assert 0 < large <= 2.3 * small, (small, large)
