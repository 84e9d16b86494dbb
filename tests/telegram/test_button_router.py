"""One handler takes every button press: a prefix no feature wrote is a stale button too."""

import pytest

from bot.telegram.buttons import ROUTES, route_of
from tests.buttons import last_to, press
from tests.fakes.anthropic_server import text
from tests.harness import OWNER


@pytest.mark.parametrize("data", ["q:1", "zzz", "M:p:1", ""])
async def test_data_no_feature_wrote_is_answered_as_a_stale_button(harness, data):
    harness.model.default = text("ok")
    await harness.say(OWNER, "hi")
    message = last_to(harness, OWNER)
    answers_before = len(harness.tg.callback_answers)
    assert await press(harness, message, data) == []
    [answer] = harness.tg.callback_answers[answers_before:]
    assert answer["text"] == "This button no longer works." and answer["show_alert"] is True
    assert harness.tg.message(OWNER, message["message_id"]) == message  # untouched


def test_each_prefix_belongs_to_one_feature():
    prefixes = [prefix for route in ROUTES for prefix in route.prefixes]
    assert len(prefixes) == len(set(prefixes))
    for data in ("m:p:1", "u:5", "p:5:y", "s:5", "e:y:1:1", "r:d:1", "t:a:1"):
        route = route_of(data)
        assert route is not None and route.parse(data) is not None, data
