"""The fake Messages API's prompt cache accounting follows Anthropic's documented rules."""

import anthropic
import pytest

from tests.fakes.anthropic_server import (
    CACHE_MIN_TOKENS,
    FakeAnthropic,
    PromptCache,
    prompt_blocks,
)
from tests.fakes.claude_tokens import text_tokens

MARK = {"type": "ephemeral"}
LONG = "The user keeps a long list of facts worth remembering. " * 150  # > 1024 tokens
MODEL = "claude-test"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def request(messages, *, system=LONG, tool_choice=None, tools=None):
    """Return a request with a cached system block and the given messages."""
    body = {
        "model": MODEL,
        "max_tokens": 100,
        "system": [{"type": "text", "text": system, "cache_control": MARK}],
        "messages": messages,
    }
    if tools is not None:
        body["tools"] = tools
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    return body


def user(text, cached=False):
    block = {"type": "text", "text": text}
    if cached:
        block["cache_control"] = MARK
    return {"role": "user", "content": [block]}


def assistant(text):
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def test_blocks_come_in_cache_order_and_count_text_tokens():
    tool = {"name": "t", "description": "d", "input_schema": {"type": "object"}}
    blocks = prompt_blocks(request([user("hello there", cached=True)], tools=[tool]))
    assert [b.key.split(",")[0] for b in blocks] == ['["tools"', '["system"', '[["messages"']
    assert blocks[1].tokens == text_tokens(LONG)
    assert blocks[2].tokens == text_tokens("hello there")
    assert [b.ttl for b in blocks] == [None, "5m", "5m"]


def test_first_request_writes_the_marked_prefix_and_a_repeat_reads_it():
    cache = PromptCache()
    body = request([user("hi")])
    first = cache.account(body)
    system = text_tokens(LONG)
    assert (first.cache_creation_input_tokens, first.cache_read_input_tokens) == (system, 0)
    assert first.input_tokens == text_tokens("hi")
    second = cache.account(body)
    assert (second.cache_creation_input_tokens, second.cache_read_input_tokens) == (0, system)
    assert second.input_tokens == text_tokens("hi")
    assert second.ephemeral_5m_input_tokens == 0 and first.ephemeral_5m_input_tokens == system


def test_a_moving_breakpoint_reads_the_previous_turn_and_writes_only_the_new_part():
    cache = PromptCache()
    turn1 = [user("first question", cached=True)]
    turn2 = [user("first question"), assistant("first answer"), user("second", cached=True)]
    one = cache.account(request(turn1))
    two = cache.account(request(turn2))
    assert one.cache_creation_input_tokens == text_tokens(LONG) + text_tokens("first question")
    assert two.cache_read_input_tokens == one.cache_creation_input_tokens
    assert two.cache_creation_input_tokens == text_tokens("first answer") + text_tokens("second")
    assert two.input_tokens == 0
    assert two.total == one.total + text_tokens("first answer") + text_tokens("second")


def test_a_prefix_shorter_than_the_minimum_is_neither_written_nor_read():
    cache = PromptCache()
    body = request([user("hi")], system="short instructions")
    for _ in range(2):
        account = cache.account(body)
        assert account.cache_creation_input_tokens == account.cache_read_input_tokens == 0
        assert account.input_tokens == text_tokens("short instructions") + text_tokens("hi")
    assert CACHE_MIN_TOKENS == 1024


def test_a_change_before_the_breakpoint_misses():
    cache = PromptCache()
    cache.account(request([user("hi")]))
    changed = cache.account(request([user("hi")], system=LONG + " One more fact."))
    assert changed.cache_read_input_tokens == 0
    assert changed.cache_creation_input_tokens == text_tokens(LONG + " One more fact.")


def test_a_different_model_does_not_share_the_cache():
    cache = PromptCache()
    cache.account(request([user("hi")]))
    other = request([user("hi")])
    other["model"] = "claude-other"
    assert cache.account(other).cache_read_input_tokens == 0


def test_changing_tool_choice_invalidates_cached_messages_but_not_the_system():
    cache = PromptCache()
    messages = [user("question " * 10, cached=True)]
    cache.account(request(messages))
    forced = cache.account(request(messages, tool_choice={"type": "none"}))
    assert forced.cache_read_input_tokens == text_tokens(LONG)


def test_entries_expire_after_five_minutes_unless_read():
    clock = Clock()
    cache = PromptCache(clock=clock)
    body = request([user("hi")])
    cache.account(body)
    clock.now += 299
    assert cache.account(body).cache_read_input_tokens > 0  # the read refreshes the entry
    clock.now += 299
    assert cache.account(body).cache_read_input_tokens > 0
    clock.now += 301
    missed = cache.account(body)
    assert missed.cache_read_input_tokens == 0 and missed.cache_creation_input_tokens > 0


def test_a_one_hour_breakpoint_is_reported_as_such_and_lives_longer():
    clock = Clock()
    cache = PromptCache(clock=clock)
    body = request([user("hi")])
    body["system"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    first = cache.account(body)
    assert first.ephemeral_1h_input_tokens == text_tokens(LONG)
    assert first.ephemeral_5m_input_tokens == 0
    clock.now += 1800
    assert cache.account(body).cache_read_input_tokens == text_tokens(LONG)


def test_hits_are_looked_for_only_twenty_blocks_back():
    def history(n):
        messages = []
        for i in range(n):
            messages += [user(f"question {i}"), assistant(f"answer {i}")]
        return messages

    near, far = PromptCache(), PromptCache()
    for cache, extra in ((near, 9), (far, 11)):
        base = history(1)
        base[0]["content"][0]["cache_control"] = MARK
        written = cache.account(request(base)).cache_creation_input_tokens
        longer = [user("question 0"), *history(extra + 1)[1:], user("newest", cached=True)]
        account = cache.account(request(longer))
        # 9 extra turns put the old breakpoint 20 blocks back; 11 put it 24 back.
        expected = written if cache is near else text_tokens(LONG)
        assert account.cache_read_input_tokens == expected


@pytest.fixture
async def cached_fake():
    async with FakeAnthropic(cache_emulation=True) as server:
        yield server


async def test_the_server_reports_cache_usage_to_the_real_sdk(cached_fake):
    async with anthropic.AsyncAnthropic(
        api_key=cached_fake.api_key, base_url=cached_fake.base_url, max_retries=0
    ) as client:
        body = request([user("hello", cached=True)])
        body.pop("model")
        first = await client.messages.create(model=MODEL, **body)
        second = await client.messages.create(model=MODEL, **body)
    assert first.usage.cache_creation_input_tokens == text_tokens(LONG) + text_tokens("hello")
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.input_tokens == 0
    assert first.usage.cache_creation.ephemeral_5m_input_tokens > 0


async def test_without_emulation_the_server_reports_no_cache_activity():
    async with (
        FakeAnthropic() as server,
        anthropic.AsyncAnthropic(
            api_key=server.api_key, base_url=server.base_url, max_retries=0
        ) as client,
    ):
        message = await client.messages.create(
            model=MODEL, max_tokens=10, messages=[user("hello", cached=True)]
        )
    assert message.usage.cache_read_input_tokens == 0
    assert message.usage.cache_creation_input_tokens == 0
    assert message.usage.input_tokens > 0
