"""Tests for rendering replies as Telegram HTML and splitting them into messages."""

import random
import re

import pytest

from bot.telegram.format import (
    MAX_MESSAGE_LENGTH,
    html_to_plain,
    render_html,
    render_reply,
    split_html,
    split_plain,
)
from tests.fakes.telegram_server import format_text, utf16_len

# ---------------------------------------------------------------------------
# The fake Bot API's validator: what Telegram refuses, and what it would silently drop.


class InvalidHtml(AssertionError):
    """Raised when a string would be rejected (or mangled) by Telegram's HTML parser."""


# Characters TDLib drops or counts as empty (clean_input_string, strip_empty_characters).
_TELEGRAM_EMPTY = re.compile(
    "[\x00-\x20\u00a0\u030a\u0333\u033f\u1680\u180e\u2000-\u200f\u2028-\u202f"
    "\u205f\u2800\u3000\ufeff\ufffc\U000e0000-\U000e007f]+"
)


def strip_empty(text: str) -> str:
    """Strip what Telegram ignores from both ends of text."""
    start, end = _stripped_bounds(text, 0, len(text))
    return text[start:end]


def _stripped_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Return the bounds of text[start:end] once stripped as strip_empty strips it.

    That is: str.strip(), then re.sub(f"^{E}|{E}$", "", ...) with E the empty characters'
    pattern, whose second match is the run of them that ends the text (after the first's).
    Bounds rather than copies: assert_text_kept strips the rest of a long text per piece.
    """
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if leading := _TELEGRAM_EMPTY.match(text, start, end):
        start = leading.end()
    while end > start and _TELEGRAM_EMPTY.fullmatch(text[end - 1]):
        end -= 1
    return start, end


def is_empty_to_telegram(text: str) -> bool:
    """Tell whether Telegram would reject text as an empty message."""
    return not text or bool(_TELEGRAM_EMPTY.fullmatch(text))


def validate(piece: str, limit: int = MAX_MESSAGE_LENGTH) -> None:
    """Raise InvalidHtml unless Telegram accepts piece whole, and it is within limit."""
    if is_empty_to_telegram(html_to_plain(piece)):
        raise InvalidHtml(f"empty piece {piece!r}")
    if utf16_len(piece) > limit:
        raise InvalidHtml(f"piece is {utf16_len(piece)} UTF-16 units, limit {limit}")
    dropped: list[str] = []
    try:
        format_text(piece, "HTML", dropped=dropped)
    except Exception as refusal:  # the fake's Bot API error
        raise InvalidHtml(f"{refusal}: {piece!r}") from None
    if dropped:
        raise InvalidHtml(f"Telegram would drop {dropped}: {piece!r}")


def plain(pieces: list[str]) -> list[str]:
    """Return the visible text of each piece."""
    return [html_to_plain(piece) for piece in pieces]


def assert_text_kept(pieces: list[str], whole: str) -> None:
    """Assert the pieces' text is the whole text, losing only whitespace at cuts."""
    start, end = 0, len(whole)  # the rest of the whole text: whole[start:end]
    for piece in pieces:
        text = strip_empty(piece)
        start, end = _stripped_bounds(whole, start, end)
        assert whole.startswith(text, start, end), (text[:80], whole[start:end][:80])
        start += len(text)
    assert is_empty_to_telegram(whole[start:end]), whole[start:end][:80]


@pytest.mark.parametrize(
    "bad",
    [
        "<b>x",
        "x</b>",
        "<b><i>x</b></i>",
        "a & b",
        "a < b",
        "&nbsp;x",
        "<span>x</span>",
        '<a href="javascript:x">x</a>',
        '<a href="https://x/?a&b">x</a>',
        "<code><b>x</b></code>",
        "<b><code>x</code></b>",
        '<a href="https://e.com"><code>x</code></a>',
        '<a href="https://e.com">x <a href="https://f.com">y</a></a>',
        "<blockquote><blockquote>x</blockquote></blockquote>",
        "<pre>x<b>y</b></pre>",
        "  \n ",
        "<b> \u200f\u202e </b>",
        "x" * 5000,
    ],
)
def test_the_validator_rejects_what_telegram_rejects(bad):
    with pytest.raises(InvalidHtml):
        validate(bad)


def test_the_validator_accepts_good_html():
    validate(
        '<b>a <i>b</i></b> <a href="https://e.com/?a=1&amp;b=&quot;2&quot;">l</a> '
        "&lt;&gt;&amp;&quot; <blockquote>q <s>s</s></blockquote>\n"
        '<pre><code class="language-python">x</code></pre> <code>y</code>'
    )


# ---------------------------------------------------------------------------
# render_html: each construct


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("plain text", "plain text"),
        ("**bold** and __bold__", "<b>bold</b> and <b>bold</b>"),
        ("*italic* and _italic_", "<i>italic</i> and <i>italic</i>"),
        ("~~gone~~", "<s>gone</s>"),
        ("***both***", "<b><i>both</i></b>"),
        ("*it **bold** it*", "<i>it <b>bold</b> it</i>"),
        ("**bold with _it_**", "<b>bold with <i>it</i></b>"),
        ("use `x < y && z`", "use <code>x &lt; y &amp;&amp; z</code>"),
        ("``a ` b``", "<code>a ` b</code>"),
        ("`<b>&amp;</b>`", "<code>&lt;b&gt;&amp;amp;&lt;/b&gt;</code>"),
        ("`*not italic*`", "<code>*not italic*</code>"),
        ("[site](https://example.com)", '<a href="https://example.com">site</a>'),
        (
            '[q](https://e.com/?a="1"&b=2)',
            '<a href="https://e.com/?a=&quot;1&quot;&amp;b=2">q</a>',
        ),
        (
            "[wiki](https://en.wikipedia.org/wiki/Foo_(bar))",
            '<a href="https://en.wikipedia.org/wiki/Foo_(bar)">wiki</a>',
        ),
        ("[**bold link**](http://e.com)", '<a href="http://e.com"><b>bold link</b></a>'),
        ("[bad](javascript:alert(1))", "[bad](javascript:alert(1))"),
        ("# Title", "<b>Title</b>"),
        ("### Sub *title* ###", "<b>Sub <i>title</i></b>"),
        ("#hashtag", "#hashtag"),
        ("- one\n* two\n  - nested", "• one\n• two\n  • nested"),
        ("- **bold** item", "• <b>bold</b> item"),
        ("1. first\n2. second", "1. first\n2. second"),
        ("> quoted\n> **more**\nafter", "<blockquote>quoted\n<b>more</b></blockquote>\nafter"),
        ("a < b & c > d", "a &lt; b &amp; c &gt; d"),
        ("&amp; &lt;", "&amp;amp; &amp;lt;"),
        ('say "hi"', 'say "hi"'),
        ("<b>not a tag</b>", "&lt;b&gt;not a tag&lt;/b&gt;"),
    ],
)
def test_render_html_constructs(markdown, expected):
    assert render_html(markdown) == expected
    validate(expected)


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        (
            "```python\nif a < b and c > d:\n    print('&')\n```",
            '<pre><code class="language-python">if a &lt; b and c &gt; d:\n'
            "    print('&amp;')</code></pre>",
        ),
        ("```\nno language\n```", "<pre><code>no language</code></pre>"),
        (
            "before\n```js\nx = 1\n```\nafter",
            'before\n<pre><code class="language-js">x = 1</code></pre>\nafter',
        ),
        (
            "```sh\nunterminated <x>\n\nstill code",
            '<pre><code class="language-sh">unterminated &lt;x&gt;\n\nstill code</code></pre>',
        ),
        ("````\n```\ninner\n```\n````", "<pre><code>```\ninner\n```</code></pre>"),
        ("~~~\ntilde\n~~~", "<pre><code>tilde</code></pre>"),
        ("```\n**not bold** <b>\n```", "<pre><code>**not bold** &lt;b&gt;</code></pre>"),
        (
            "1. step\n   ```bash\n   ls -la\n     x\n   ```",
            '1. step\n<pre><code class="language-bash">ls -la\n  x</code></pre>',
        ),
        ("```js\n```", ""),
        ("```inline``` code", "<code>inline</code> code"),
    ],
)
def test_render_html_code_blocks(markdown, expected):
    assert render_html(markdown) == expected


def test_code_inside_formatting_is_lifted_out_because_telegram_forbids_nesting():
    assert render_html("**run `make` now**") == "<b>run </b><code>make</code><b> now</b>"
    assert render_html("# Using `pip`") == "<b>Using </b><code>pip</code>"
    assert render_html("[see `x`](https://e.com)") == (
        '<a href="https://e.com">see </a><code>x</code>'
    )


def test_blockquote_may_contain_code_and_links():
    assert render_html("> `x` and [l](https://e.com)") == (
        '<blockquote><code>x</code> and <a href="https://e.com">l</a></blockquote>'
    )


@pytest.mark.parametrize(
    "literal",
    [
        "snake_case_name",
        "open file_name.py and my_var_2",
        "2 * 3 * 4",
        "2*3*4",
        "a * b",
        "**unclosed bold",
        "unclosed ** in the middle",
        "`unclosed code",
        "~~unclosed strike",
        "~single tilde~",
        "*",
        "** **",
        "[text](",
        "[text](not a url)",
        "see https://example.com/some_path_name_ now",
        "price: $5 * 2 = $10",
        "_ lone underscores _",
        "__init__.py",
        "see __init__.py and setup.py",
        "_private_var is set",
        "* * *",
        "---",
        "C:\\Users\\name",
        "x = 2*y*z",
    ],
)
def test_literal_markup_stays_literal(literal):
    assert html_to_plain(render_html(literal)) == literal
    assert "<" not in render_html(literal).replace("&lt;", "")


def test_underscore_emphasis_still_works_around_words():
    assert render_html("an _emphasised_ word") == "an <i>emphasised</i> word"
    assert render_html("snake_case and _it_") == "snake_case and <i>it</i>"


def test_underscores_that_start_a_name_do_not_swallow_later_text():
    assert render_html("_private_var and _x_") == "_private_var and <i>x</i>"
    assert render_html("__init__.py or __bold__") == "__init__.py or <b>bold</b>"
    assert render_html("__snake_case inside__") == "<b>snake_case inside</b>"


def test_backslash_escapes_make_markup_literal():
    assert render_html("a \\*b\\* c") == "a *b* c"
    assert render_html("\\# not a heading") == "# not a heading"
    assert render_html("\\- not a bullet") == "- not a bullet"
    assert render_html("*it \\* still*") == "<i>it * still</i>"
    assert render_html("`a\\`b`") == "<code>a\\</code>b`"


def test_bare_url_underscores_do_not_start_emphasis():
    assert render_html("__https://e.com/a__b__") == "<b>https://e.com/a__b</b>"
    assert render_html("(https://e.com/_x_)") == "(https://e.com/_x_)"


def test_line_endings_and_unsendable_code_points_are_normalized():
    assert render_html("a\r\nb\rc\x00") == "a\nb\nc"
    assert render_html("lone \ud83d surrogate") == "lone \ufffd surrogate"


def test_deeply_nested_markup_does_not_recurse_forever():
    markdown = "**_" * 2000 + "x" + "_**" * 2000
    rendered = render_html(markdown)
    for piece in split_html(rendered):
        validate(piece)


def test_pathological_line_is_fast():
    markdown = "*a _b ~~c [e (f " * 3000
    assert html_to_plain(render_html(markdown)) == markdown


# ---------------------------------------------------------------------------
# split_html


def test_six_thousand_char_reply_becomes_two_valid_pieces():
    paragraph = "**Point {}.** " + "Lorem ipsum dolor sit amet, *consectetur* adipiscing. " * 5
    markdown = "\n\n".join(paragraph.format(i) for i in range(21))
    assert 5900 < len(markdown) < 6200
    pieces = render_reply(markdown)
    assert len(pieces) == 2
    for piece in pieces:
        validate(piece)
        assert utf16_len(piece) <= MAX_MESSAGE_LENGTH
    assert_text_kept(plain(pieces), html_to_plain(render_html(markdown)))
    # The cut falls at a paragraph break, so each piece ends a paragraph.
    assert pieces[0].endswith("adipiscing. ") or pieces[0].endswith("adipiscing.")
    assert pieces[1].startswith("<b>Point ")


def test_twenty_thousand_char_code_block_splits_into_balanced_pre_pieces():
    code = "\n".join(f"value_{i} = compute({i}) if a < b else c & d  # > ok" for i in range(400))
    assert len(code) > 20_000
    pieces = render_reply(f"```python\n{code}\n```")
    assert len(pieces) >= 5
    opening = '<pre><code class="language-python">'
    for piece in pieces:
        validate(piece)
        assert piece.startswith(opening)
        assert piece.endswith("</code></pre>")
    # Cuts fall at line breaks, so rejoining on newlines restores the code exactly.
    assert "\n".join(html_to_plain(p) for p in pieces) == code


def test_split_prefers_paragraph_then_line_then_space():
    assert split_html("a" * 60 + "\n\n" + "b" * 20 + "\n" + "c" * 15 + " " + "d" * 30, 100) == [
        "a" * 60,
        "b" * 20 + "\n" + "c" * 15 + " " + "d" * 30,
    ]
    assert split_html("a" * 60 + "\n" + "b" * 30 + " " + "c" * 30, 100) == [
        "a" * 60,
        "b" * 30 + " " + "c" * 30,
    ]
    assert split_html("word " * 30, 64) == [
        "word " * 12 + "word",
        "word " * 12 + "word",
        "word " * 4,
    ]
    assert split_html("x" * 250, 100) == ["x" * 100, "x" * 100, "x" * 50]


def test_split_ignores_breaks_too_early_in_a_piece():
    # A paragraph break 10 units in would waste most of a message.
    pieces = split_html("a" * 10 + "\n\n" + "b " * 60, 64)
    assert pieces[0].startswith("a" * 10 + "\n\nb b")


def test_split_reopens_tags_with_their_attributes():
    link = '<a href="https://e.com/?a=1&amp;b=2">'
    pieces = split_html("<b>" + link + "click here " * 20 + "</a></b> tail", 80)
    assert len(pieces) > 2
    for piece in pieces[:-1]:
        validate(piece, 80)
        assert piece.startswith("<b>" + link)
        assert piece.endswith("</a></b>")
    assert pieces[-1].endswith(" tail")


def test_split_never_cuts_entities():
    pieces = split_html("&amp;" * 100, 33)
    assert len(pieces) > 1
    for piece in pieces:
        assert re.fullmatch(r"(&amp;)+", piece), piece
    assert "".join(pieces) == "&amp;" * 100


def test_split_measures_in_utf16_units():
    pieces = split_html("😀" * 100, 50)
    assert pieces == ["😀" * 25] * 4


def test_emoji_heavy_text_splits_without_breaking_characters():
    family = "👨‍👩‍👧‍👦"
    flag = "🇺🇦"
    thumbs = "👍🏽"
    accented = "e\u0301"
    clusters = [family, flag, thumbs, accented, "❤️", "😀"]
    rng = random.Random(7)
    sequence = [rng.choice(clusters) for _ in range(600)]
    text = "".join(sequence)
    for pieces in (split_html(text, 40), split_plain(text, 40)):
        for piece in pieces:
            assert utf16_len(piece) <= 40
        # Every piece is a whole number of clusters, in the original order.
        assert "".join(pieces) == text
        position = 0
        boundaries = set()
        for cluster in sequence:
            position += len(cluster)
            boundaries.add(position)
        position = 0
        for piece in pieces[:-1]:
            position += len(piece)
            assert position in boundaries


def test_long_text_without_breaks_is_cut_hard_but_whole():
    url = "https://example.com/" + "x" * 9000
    pieces = render_reply(url)
    assert len(pieces) == 3
    assert "".join(pieces) == url


def test_stray_and_unclosed_tags_are_repaired():
    assert split_html("a</b>b<i>c", 100) == ["ab<i>c</i>"]


def test_a_tag_longer_than_the_limit_loses_its_formatting_not_its_text():
    pieces = split_html('<a href="https://' + "h" * 100 + '">link text</a> and more', 40)
    assert pieces == ["link text and more"]


def test_whitespace_only_pieces_are_dropped():
    html = "a" * 40 + "\n\n" + "<b>" + " " * 50 + "</b>\n\n" + "b" * 10
    assert split_html(html, 40) == ["a" * 40, "b" * 10]
    assert split_html("   \n\n  ") == []


def test_pieces_do_not_start_with_whitespace_except_code_indentation():
    assert split_html("a" * 40 + "\n\n\n\n  " + "b" * 10, 40) == ["a" * 40, "b" * 10]
    code = "<pre><code>" + "x" * 30 + "\n    indented</code></pre>"
    assert split_html(code, 60) == [
        "<pre><code>" + "x" * 30 + "</code></pre>",
        "<pre><code>    indented</code></pre>",
    ]


def test_a_cut_between_pre_and_code_drops_the_language_class_not_validity():
    tag = '<pre><code class="language-python">'
    for piece in split_html("x" * 30 + tag + "print(1)\nprint(2)</code></pre>", 40):
        validate(piece, 40)


def test_short_html_is_one_piece():
    assert split_html("<b>hi</b>") == ["<b>hi</b>"]


def test_limit_too_small_is_rejected():
    with pytest.raises(ValueError):
        split_html("x", 10)
    with pytest.raises(ValueError):
        split_plain("x", 10)


# ---------------------------------------------------------------------------
# render_reply, html_to_plain, split_plain


def test_render_reply_of_blank_reply_is_empty():
    assert render_reply("") == []
    assert render_reply("  \n\t\n ") == []
    assert render_reply("\u200b\u200f \u3000") == []
    # Markup around nothing visible is still nothing to Telegram.
    assert render_reply("**\u200b**") == []


def test_render_reply_renders_and_splits():
    assert render_reply("**hi** there") == ["<b>hi</b> there"]
    assert len(render_reply("word " * 2000, 1000)) == 10


def test_html_to_plain_strips_tags_and_unescapes():
    html = '<b>a &amp; b</b> &lt;x&gt; <a href="https://e.com/?a&amp;b">l</a> &quot;q&quot;'
    assert html_to_plain(html) == 'a & b <x> l "q"'


def test_html_to_plain_round_trips_rendered_text():
    text = "if a < b && c > d: print('<b>')"
    assert html_to_plain(render_html(f"```\n{text}\n```")) == text


def test_split_plain_prefers_breaks_and_measures_utf16():
    assert split_plain("a" * 60 + "\n\n" + "b" * 60, 100) == ["a" * 60, "b" * 60]
    assert split_plain("😀" * 30, 32) == ["😀" * 16, "😀" * 14]
    assert split_plain("<b> & </b>", 100) == ["<b> & </b>"]
    assert split_plain(" \n ") == []
    assert split_plain("\u200b\u200f\ufeff\t") == []


# ---------------------------------------------------------------------------
# Fuzzing: every piece of every reply is valid and fits.

_FRAGMENTS = [
    "*",
    "**",
    "***",
    "_",
    "__",
    "~",
    "~~",
    "`",
    "``",
    "```",
    "```python\n",
    "\n```\n",
    "\n",
    "\n\n",
    " ",
    "  ",
    "\t",
    "<",
    ">",
    "&",
    "&amp;",
    "&lt;",
    "&#39;",
    '"',
    "'",
    "# ",
    "## ",
    "- ",
    "* ",
    "> ",
    ">> ",
    "1. ",
    "[",
    "]",
    "(",
    ")",
    '[a](https://e.com/?x=1&y="2")',
    "[b](http://e.com/a_(b))",
    "https://e.com/a_b_c",
    "snake_case",
    "word",
    "x",
    "2 * 3",
    "<b>",
    "</i>",
    "<script>",
    "😀",
    "👨‍👩‍👧‍👦",
    "🇺🇸",
    "👍🏽",
    "e\u0301",
    "שלום",
    "مرحبا",
    "\u200f",
    "\u202e",
    "ä",
    "中文",
    "\\",
    "|",
    "#",
    "-",
    "+",
]


def _fuzz_inputs(count: int, seed: int) -> list[str]:
    """Return deterministic random strings mixing markup, emoji and scripts."""
    rng = random.Random(seed)
    inputs = []
    for _ in range(count):
        size = rng.choice((1, 3, 10, 40, 120))
        inputs.append("".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(1, size))))
    return inputs


def test_fuzzed_replies_always_render_to_valid_pieces():
    for n, markdown in enumerate(_fuzz_inputs(2000, seed=20240611)):
        limit = (32, 40, 64, 150, MAX_MESSAGE_LENGTH)[n % 5]
        pieces = render_reply(markdown, limit)
        for piece in pieces:
            try:
                validate(piece, limit)
            except InvalidHtml as error:
                raise AssertionError(f"input {markdown!r} limit {limit}: {error}") from error
        assert_text_kept(plain(pieces), html_to_plain(render_html(markdown)))


def test_a_reply_that_fits_comes_out_as_splitting_would_leave_it():
    for n, markdown in enumerate(_fuzz_inputs(2000, seed=7)):
        limit = (40, 150, MAX_MESSAGE_LENGTH)[n % 3]
        assert render_reply(markdown, limit) == split_html(render_html(markdown), limit)


def test_fuzzed_long_replies_split_to_valid_pieces():
    for markdown in _fuzz_inputs(20, seed=99):
        markdown = (markdown + "\n") * 60
        pieces = render_reply(markdown, 500)
        for piece in pieces:
            validate(piece, 500)
        assert_text_kept(plain(pieces), html_to_plain(render_html(markdown)))


_FENCE_INFO = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*[^\s`]", re.MULTILINE)


def test_fuzzed_rendering_keeps_every_letter():
    # Without links or fence languages, markup only ever removes punctuation.
    fragments = [f for f in _FRAGMENTS if "http" not in f and "python" not in f]
    rng = random.Random(5)
    for _ in range(1000):
        markdown = "".join(rng.choice(fragments) for _ in range(rng.randint(1, 40)))
        if _FENCE_INFO.search(markdown):
            continue  # a fence's info string is its language, not text
        plain = html_to_plain(render_html(markdown))
        assert [c for c in plain if c.isalnum()] == [c for c in markdown if c.isalnum()]


def test_fuzzed_plain_text_splits_within_limit():
    for n, text in enumerate(_fuzz_inputs(300, seed=3)):
        limit = (32, 50, 100)[n % 3]
        pieces = split_plain(text * 5, limit)
        for piece in pieces:
            assert not is_empty_to_telegram(piece)
            assert utf16_len(piece) <= limit
        assert_text_kept(pieces, text * 5)
