"""Figure 7: how long rendering and splitting a reply takes at worst, and how that grows.

Each input of an adversarial corpus is built at 4,096 and at 8,192 characters and rendered
with `render_reply` (Markdown to Telegram HTML, split into messages): the median of a few
samples of CPU time each (the machine is shared), the sizes taking turns, a sample being as
many calls as take about 10 ms. The figures are the worst time per 4,096 characters over
the corpus and both sizes, and the worst ratio between an input's two sizes (the median of
the ratios of samples taken one after the other): linear code doubles, quadratic code
quadruples.
"""

import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from bot.telegram.format import render_reply
from tests.perf.common import Config, Row, command, median

PER_4096_TARGET_MS = 20.0
DOUBLING_TARGET = 2.2
SAMPLE_SECONDS = 0.01

_PARAGRAPH = (
    "**{n}. Plan the week.** Start with the _hard_ task, then check `make test` and the "
    "[runbook](https://wiki.example.com/Ops_(team)/run_book) before lunch; see "
    "https://example.com/docs/setup_guide. for details 🙂.\n\n"
    "- one *thing* at a time\n- then ~~nothing~~ the next\n\n"
    "> Quoted advice with `code` and a snake_case_name.\n\n"
    "```python\nfor i in range(10):\n    print(i * 2)  # <ok> & done\n```\n\n"
)


def repeat(pattern: str, size: int) -> str:
    """Repeat pattern whole as often as it fits in size characters."""
    return pattern * (size // len(pattern))


def pad(text: str, size: int) -> str:
    """Make text exactly size characters long with trailing spaces.

    Inputs are built from whole patterns and padded at the end, so that an input and its
    double have the same shape: a pattern cut short could pair up delimiters differently.
    """
    assert len(text) <= size, (len(text), size)
    return text + " " * (size - len(text))


def _halves(opening: str, closing: str, size: int, middle: str = "") -> str:
    """Openings, the middle, then as many closings, within size characters."""
    count = (size - len(middle)) // (len(opening) + len(closing))
    return pad(opening * count + middle + closing * count, size)


def _unclosed_ticks(size: int, prefix: str = "") -> str:
    """Backtick runs of every length 1, 2, 3, ..., none of them closed."""
    parts, total, run = [], 0, 1
    while total + len(prefix) + run + 3 <= size:
        parts.append(prefix + "`" * run + " a ")
        total += len(parts[-1])
        run += 1
    return pad("".join(parts), size)


_RUSSIAN = (
    "**{n}. План на неделю.** Начните с _трудной_ задачи, проверьте `make test` и "  # noqa: RUF001
    "[инструкцию](https://wiki.example.com/Ops_(team)/run_book) до обеда 🙂. Ёлка, "
    "съёмка и «кавычки» — всё на месте.\n\n- сначала *одно*\n- потом ~~ничего~~ другое\n\n"
)


def _realistic(size: int, paragraph: str = _PARAGRAPH) -> str:
    """A long, ordinary reply: headings, emphasis, code, links, lists, quotes, fences."""
    text = "# Your week\n\n" + "".join(paragraph.format(n=n) for n in range(size // 200 + 2))
    return pad(text[: text.rfind("\n\n", 0, size - 1) + 2], size)


# Each builds an input of exactly the given number of characters.
CORPUS: dict[str, Callable[[int], str]] = {
    "the review's _a ... b_x": lambda n: pad(repeat("_a ", n - 3) + "b_x", n),
    "unclosed backtick runs of every length": _unclosed_ticks,
    "star openers before unclosed backticks": lambda n: _unclosed_ticks(n, "*a "),
    "underscore openers before unclosed backticks": lambda n: _unclosed_ticks(n, "_a "),
    "single-star openers": lambda n: pad(repeat("*a ", n), n),
    "bold openers": lambda n: pad(repeat("**a ", n), n),
    "strike openers": lambda n: pad(repeat("~~a ", n), n),
    "double-underscore openers then a name": lambda n: pad(repeat("__a ", n - 4) + "b__x", n),
    "one long star run": lambda n: pad("*" * (n - 1) + "a", n),
    "alternating delimiter runs": lambda n: pad(repeat("*_~**__~~***___ ", n), n),
    "nested emphasis, many levels deep": lambda n: _halves(
        "**a _a ~~a *a ", " a* a~~ a_ a**", n, "x"
    ),
    "opening then closing runs of bold and italic marks": lambda n: _halves("**_", "_**", n),
    "_names in prose": lambda n: pad(
        repeat("_private_var and __init__.py or snake_case_name ", n), n
    ),
    "openers before _names": lambda n: pad(repeat("_a _private_var ", n), n),
    "opening brackets": lambda n: "[" * n,
    "nested brackets": lambda n: _halves("[", "]", n),
    "unclosed links": lambda n: pad(repeat("[a](https://x", n), n),
    "links inside link URLs": lambda n: pad(repeat("[a](https://e.com/(", n), n),
    "escapes": lambda n: pad(repeat("\\*\\_\\`\\[", n), n),
    "a long URL with underscores and parentheses": lambda n: pad(
        "https://e.com/" + repeat("a_(b)_", n - 14), n
    ),
    "URLs after underscores": lambda n: pad(repeat("_https://e.com/a_", n), n),
    "a URL with trailing punctuation": lambda n: pad("https://e.com/a" + repeat(".)_", n - 15), n),
    "a heading of spaces": lambda n: "# a" + " " * (n - 4) + "b",
    "a fence line with a backtick at its end": lambda n: "```" + "a" * (n - 4) + "`",
    "quote lines": lambda n: pad(repeat("> a *b* `c`\n", n), n),
    "emoji and combining marks": lambda n: pad(repeat("👨‍👩‍👧‍👦 e\u0301 🇺🇦 *a* ", n), n),
    "a realistic long reply": _realistic,
    "a realistic long reply in Russian": lambda n: _realistic(n, _RUSSIAN),
}


def _loops(markdown: str) -> int:
    """Return how many calls make a sample of about 10 ms, so a timer tick is noise no more."""
    start = time.process_time()
    render_reply(markdown)
    once = time.process_time() - start
    return max(1, min(200, round(SAMPLE_SECONDS / max(once, 1e-6))))


def _sample(markdown: str, loops: int) -> float:
    """Return the mean time of loops calls of render_reply on markdown, in seconds."""
    start = time.process_time()
    for _ in range(loops):
        render_reply(markdown)
    return (time.process_time() - start) / loops


class Timing(NamedTuple):
    """One input's median times at the two sizes, and the median ratio of paired samples."""

    early: float
    late: float
    ratio: float


def measure(sizes: tuple[int, int], repeats: int) -> dict[str, Timing]:
    """Time each corpus input at the two sizes, in seconds."""
    times = {}
    for name, build in CORPUS.items():
        texts = (build(sizes[0]), build(sizes[1]))
        loops = _loops(texts[0])
        # The sizes take turns, and each ratio compares samples taken one after the other,
        # so a change in the machine's load affects both sides of it alike.
        pairs = [(_sample(texts[0], loops), _sample(texts[1], loops)) for _ in range(repeats)]
        times[name] = Timing(
            median([early for early, _ in pairs]),
            median([late for _, late in pairs]),
            median([late / early for early, late in pairs]),
        )
    return times


def rows(times: dict[str, Timing], sizes: tuple[int, int]) -> list[Row]:
    """Turn the timings into the two figures: worst time per 4,096 characters, worst ratio."""
    per_4096 = {
        (name, size): seconds * 1000 * 4096 / size
        for name, timing in times.items()
        for size, seconds in zip(sizes, timing[:2], strict=True)
    }
    (slowest, at), worst_ms = max(per_4096.items(), key=lambda item: item[1])
    steepest = max(times, key=lambda name: times[name].ratio)
    details = tuple(
        f"{name}: {t.early * 1000:.2f} ms at {sizes[0]:,}, {t.late * 1000:.2f} ms at "
        f"{sizes[1]:,} ({t.ratio:.2f}x)"
        for name, t in times.items()
    )
    corpus = f"{len(times)} adversarial inputs"
    return [
        Row(
            key="format",
            figure=f"8. Reply rendering and splitting, worst case over {corpus}, per 4,096 "
            "characters",
            value=f"{worst_ms:.1f} ms ({slowest}, at {at:,})",
            numbers=(worst_ms,),
            target=f"<= {PER_4096_TARGET_MS:.0f} ms",
            met=worst_ms <= PER_4096_TARGET_MS,
            command=command("format"),
            details=details,
        ),
        Row(
            key="format",
            figure=f"8. Reply rendering and splitting, worst ratio when the input doubles "
            f"({sizes[0]:,} to {sizes[1]:,} characters)",
            value=f"{times[steepest].ratio:.2f}x ({steepest})",
            numbers=(times[steepest].ratio,),
            target=f"<= {DOUBLING_TARGET}x",
            met=times[steepest].ratio <= DOUBLING_TARGET,
            command=command("format"),
        ),
    ]


async def run(config: Config, workdir: Path) -> list[Row]:
    """Time render_reply over the corpus at both sizes."""
    return rows(measure(config.format_sizes, config.format_repeats), config.format_sizes)
