"""A small load run in CI: every message answered exactly once, in order, no errors logged."""

from tests.load import run_load


async def test_200_messages_from_20_chats_are_each_answered_once_in_order():
    result = await run_load(chats=20, per_chat=10, model_latency=0.05, timeout=120)
    assert result.answered == result.messages == 200
    assert result.wrong_chats == []
    assert result.log_problems == []
