"""The judge's answer is read strictly: yes, no, or unclear."""

import pytest

from evals.judge import JUDGE_SYSTEM, judge_request, read_verdict


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [("yes", True), (" Yes.", True), ("no", False), ("No!", False), ("Maybe", None), ("", None)],
)
def test_only_yes_and_no_count(answer, verdict):
    assert read_verdict(answer) is verdict


def test_the_request_is_tiny_and_quotes_the_reply():
    body = judge_request("m", "Is this reply written in German?", "Alles klar.")
    assert body["system"] == JUDGE_SYSTEM and body["max_tokens"] == 5
    assert body["messages"][0]["content"].endswith("<reply>\nAlles klar.\n</reply>")
