"""Request assembly: cache order, breakpoints, and histories the API accepts."""

from bot.agent.instructions import MEMORY_OFF_NOTE, STATIC_INSTRUCTIONS
from bot.agent.request import build_request, normalize_history
from memory.tools import MEMORY_TOOLS, tool_definitions


def text(role, value):
    return (role, [{"type": "text", "text": value}])


def request(turns, summary=None, **kwargs):
    return build_request(
        model="m",
        max_tokens=100,
        tools=tool_definitions(MEMORY_TOOLS),
        memory_block="## Your Memory\n\nblock",
        summary=summary,
        turns=turns,
        **kwargs,
    )


def cache_marked(req):
    blocks = list(req["system"]) + [b for m in req["messages"] for b in m["content"]]
    return [b for b in blocks if "cache_control" in b]


def test_layout_and_cache_breakpoints():
    req = request([text("user", "hi"), text("assistant", "hello"), text("user", "again")])
    assert req["system"][0] == {"type": "text", "text": STATIC_INSTRUCTIONS}
    assert req["system"][1]["cache_control"] == {"type": "ephemeral"}
    assert req["system"][1]["text"].startswith("## Your Memory")
    assert [m["role"] for m in req["messages"]] == ["user", "assistant", "user"]
    assert req["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert len(cache_marked(req)) == 2
    assert req["tools"] == tool_definitions(MEMORY_TOOLS)
    assert "tool_choice" not in req


def test_summary_is_third_system_block_and_markers_stay_within_four():
    req = request([text("user", "hi")], summary="We talked about Falcon.")
    assert len(req["system"]) == 3 and "Falcon" in req["system"][2]["text"]
    assert len(cache_marked(req)) <= 4


def test_breakpoint_does_not_leak_into_stored_turns():
    turns = [text("user", "hi")]
    request(turns)
    assert "cache_control" not in turns[0][1][0]


def test_static_instructions_do_not_change_per_turn():
    first = request([text("user", "a")])
    second = request([text("user", "a"), text("assistant", "b"), text("user", "c")])
    assert first["system"] == second["system"]


def test_consecutive_user_turns_are_merged():
    messages = normalize_history([text("user", "one"), text("user", "two")])
    assert messages == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        }
    ]


def test_unanswered_tool_use_gets_an_error_result_first():
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "add_to_memory", "input": {}}
    messages = normalize_history(
        [text("user", "save it"), ("assistant", [tool_use]), text("user", "hello?")]
    )
    follow_up = messages[2]["content"]
    assert follow_up[0]["type"] == "tool_result" and follow_up[0]["tool_use_id"] == "toolu_1"
    assert follow_up[0]["is_error"] is True
    assert follow_up[1] == {"type": "text", "text": "hello?"}


def test_trailing_tool_use_is_dropped_and_empty_text_skipped():
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "add_to_memory", "input": {}}
    messages = normalize_history(
        [text("user", "x"), ("assistant", [{"type": "text", "text": ""}, tool_use])]
    )
    assert messages == [{"role": "user", "content": [{"type": "text", "text": "x"}]}]


def test_force_answer_disables_tools():
    assert request([text("user", "x")], force_answer=True)["tool_choice"] == {"type": "none"}


def test_memory_off_drops_the_block_and_the_tools_and_keeps_history_valid():
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "add_to_memory", "input": {"a": 1}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Saved as abcdefgh"}
    req = build_request(
        model="m",
        max_tokens=100,
        tools=[],
        memory_block="",
        summary=None,
        turns=[text("user", "save"), ("assistant", [tool_use]), ("user", [result])],
    )
    assert "tools" not in req
    assert req["system"][0]["cache_control"] == {"type": "ephemeral"}
    # The instructions speak of a block and tools; a note after them says memory is off.
    assert [b["text"] for b in req["system"][1:]] == [MEMORY_OFF_NOTE]
    blocks = [b for m in req["messages"] for b in m["content"]]
    assert all(b["type"] == "text" for b in blocks)
    assert blocks[1]["text"] == '[called add_to_memory {"a": 1}]'
    assert blocks[2]["text"] == "[tool result: Saved as abcdefgh]"
