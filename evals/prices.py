"""The prices the cost figures assume, in US dollars per million tokens; --prices overrides.

Assumed on 2026-11-23 from the list prices last known to the author, those of the Claude 4.5
models (Haiku $1 in / $5 out, Sonnet $3 / $15, Opus $5 / $25; a five-minute cache write costs
1.25x input, a cache read 0.1x). They were not checked against Anthropic's current price list,
which cannot be reached from where this was written: check it, and pass --prices when they
differ. A model id is priced by the family its name contains; an unknown family as Sonnet.
"""

from dataclasses import dataclass

from evals.transcript import Usage

ASSUMED_ON = "2026-11-23"
PER = 1_000_000


@dataclass(frozen=True)
class Prices:
    """Dollars per million tokens of each kind."""

    input: float
    cache_write: float
    cache_read: float
    output: float
    source: str = f"assumed on {ASSUMED_ON}"

    def cost(self, usage: Usage) -> float:
        """Return what the usage costs, in dollars."""
        return (
            usage.input * self.input
            + usage.cache_write * self.cache_write
            + usage.cache_read * self.cache_read
            + usage.output * self.output
        ) / PER

    def as_dict(self) -> dict[str, float]:
        """Return the prices by kind, for the report."""
        kinds = ("input", "cache_write", "cache_read", "output")
        return {kind: getattr(self, kind) for kind in kinds}


FAMILY_PRICES = {
    "haiku": Prices(input=1.00, cache_write=1.25, cache_read=0.10, output=5.00),
    "sonnet": Prices(input=3.00, cache_write=3.75, cache_read=0.30, output=15.00),
    "opus": Prices(input=5.00, cache_write=6.25, cache_read=0.50, output=25.00),
}
DEFAULT_FAMILY = "sonnet"


def prices_for(model: str) -> Prices:
    """Return the assumed prices of a model, by the family its id names."""
    family = next((name for name in FAMILY_PRICES if name in model.casefold()), DEFAULT_FAMILY)
    return FAMILY_PRICES[family]


def parse_prices(text: str) -> Prices:
    """Read --prices: input,cache_write,cache_read,output in dollars per million tokens."""
    parts = [part.strip() for part in text.split(",")]
    try:
        values = [float(part) for part in parts]
    except ValueError:
        values = []
    if len(values) != 4 or any(value < 0 for value in values):
        raise ValueError(
            f"--prices {text!r}: give four numbers, input,cache_write,cache_read,output "
            "(dollars per million tokens), such as 3,3.75,0.3,15"
        )
    given, cache_write, cache_read, output = values
    return Prices(given, cache_write, cache_read, output, source="given with --prices")
