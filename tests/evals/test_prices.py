"""Assumed prices by model family, the cost of usage, and --prices."""

import pytest

from evals.prices import ASSUMED_ON, parse_prices, prices_for
from evals.transcript import Usage


def test_a_model_is_priced_by_its_family_and_an_unknown_one_as_sonnet():
    assert prices_for("claude-haiku-5-5").input == 1.0
    assert prices_for("claude-opus-5-5").output == 25.0
    assert prices_for("claude-sonnet-5-5") == prices_for("some-new-model")
    assert prices_for("claude-sonnet-5-5").source == f"assumed on {ASSUMED_ON}"


def test_each_kind_of_token_has_its_price():
    usage = Usage(input=1_000_000, cache_read=2_000_000, cache_write=1_000_000, output=100_000)
    assert prices_for("sonnet").cost(usage) == pytest.approx(3 + 0.6 + 3.75 + 1.5)


def test_prices_can_be_given():
    given = parse_prices("3, 3.75, 0.3, 15")
    assert given.as_dict() == {"input": 3, "cache_write": 3.75, "cache_read": 0.3, "output": 15}
    assert given.source == "given with --prices"
    for bad in ("3,15", "a,b,c,d", "3,3.75,-1,15"):
        with pytest.raises(ValueError, match="give four numbers"):
            parse_prices(bad)
