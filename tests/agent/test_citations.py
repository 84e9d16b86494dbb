"""Citation markers: cut from every text and every draft, read exactly; texts joined right."""

from anthropic.types import Message

from bot.agent.citations import (
    cited_ids,
    joined_text,
    marker_ids,
    visible_so_far,
    visible_texts,
    without_markers,
)
from bot.agent.response import reply_text, stored_content

A, B = "Ab12Cd34", "Zz9Yy8Xx"


def message(*blocks: dict) -> Message:
    return Message.model_validate(
        {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": list(blocks), "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )  # fmt: skip


def test_markers_go_with_the_spaces_they_would_leave():
    assert without_markers(f"Alec is your boss [[mem:{A}]].") == "Alec is your boss."
    assert without_markers(f"[[mem:{A}]] [[mem:{B}]]  Hi\n[[mem:{A}]]x") == "Hi\nx"
    assert without_markers(f"One [[mem:{A}]] [[mem:{B}]], two.") == "One, two."
    # Not markers: a short id, a link, the block's own id form.
    kept = f"[[mem:Ab12]] [a](b) [id:{A}] [[mem:{A}]"
    assert without_markers(kept) == kept
    assert marker_ids(f"x [[mem:{A}]] y [[mem:{B}]] [[mem:{A}]]") == [A, B, A]


def test_no_prefix_of_a_reply_shows_any_part_of_a_marker():
    final = f"Your boss is Alec,[[mem:{A}]] and [see](x) [[mem:{B}]].\n[[mem:{A}]] Next [x"
    shown = without_markers(final)
    assert shown == "Your boss is Alec, and [see](x).\nNext [x"
    for end in range(len(final) + 1):
        draft = visible_so_far(final[:end])
        assert "[[" not in draft and "mem:" not in draft, final[:end]
        assert shown.startswith(draft), final[:end]
    # A bracket that cannot begin a marker shows at once.
    assert visible_so_far("see [a") == "see [a"
    assert visible_so_far("see [[mem:Ab1") == "see"


def test_text_blocks_split_by_citations_join_as_one_text():
    cited = {"type": "search_result_location", "cited_text": "Mia", "source": f"memory:{B}",
             "title": "t", "search_result_index": 0, "start_block_index": 0,
             "end_block_index": 1}  # fmt: skip
    reply = message(
        {"type": "text", "text": "Your sister "},
        {"type": "text", "text": "is Mia", "citations": [cited]},
        {"type": "text", "text": f" and your boss is Alec [[mem:{A}]]."},
        {"type": "tool_use", "id": "toolu_1", "name": "search_memory", "input": {"query": "x"}},
        {"type": "text", "text": f"[[mem:{A}]]"},
    )
    assert joined_text(reply.content).startswith("Your sister is Mia and")
    assert visible_texts(reply.content) == ["Your sister is Mia and your boss is Alec."]
    assert reply_text(reply) == "Your sister is Mia and your boss is Alec."
    assert cited_ids(reply.content) == [B, A]
    assert stored_content(reply) == [
        {"type": "text", "text": "Your sister is Mia and your boss is Alec."},
        {"type": "tool_use", "id": "toolu_1", "name": "search_memory", "input": {"query": "x"}},
    ]
    # A source that is not a memory's is no memory's citation.
    other = {**cited, "source": "https://example.com"}
    assert cited_ids(message({"type": "text", "text": "x", "citations": [other]}).content) == []
