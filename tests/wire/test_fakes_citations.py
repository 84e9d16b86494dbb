"""FakeAnthropic takes search results and answers with their citations as the real API does."""

import anthropic
import pytest

from tests.fakes.anthropic_server import citing
from tests.wire.requests import ask


def result(source: str, *texts: str, enabled: bool = True) -> dict:
    return {
        "type": "search_result",
        "source": source,
        "title": f"Title of {source}",
        "content": [{"type": "text", "text": t} for t in texts],
        "citations": {"enabled": enabled},
    }


def with_results(*results: dict) -> list[dict]:
    """Return messages where a tool call's result carries the search results."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "x"}}
    answer = {"type": "tool_result", "tool_use_id": "toolu_1", "content": list(results)}
    return [
        {"role": "user", "content": [{"type": "text", "text": "find it"}, result("top", "T")]},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [answer]},
    ]


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_cited_answer_comes_back_as_the_sdk_reads_it(fa, claude, streamed):
    fa.script(citing("The sky ", ("is blue", "b"), "."))
    messages = with_results(result("a", "Grass is green."), result("b", "Sky", " is blue."))
    request = ask() | {"messages": messages}
    if streamed:
        async with claude.messages.stream(**request) as stream:
            kinds = [event.type async for event in stream]
            message = await stream.get_final_message()
        assert "citation" in kinds
    else:
        message = await claude.messages.create(**request)
    assert [block.text for block in message.content] == ["The sky ", "is blue", "."]
    assert message.content[0].citations is None and message.content[2].citations is None
    [citation] = message.content[1].citations or []
    assert citation.type == "search_result_location"
    # Counted over every search result of the request in order: "top" is 0, "a" 1, "b" 2.
    assert (citation.source, citation.search_result_index) == ("b", 2)
    assert (citation.start_block_index, citation.end_block_index) == (0, 2)
    assert citation.cited_text == "Sky is blue." and citation.title == "Title of b"


@pytest.mark.parametrize(
    "messages",
    [
        # citations on for one search result, off for another
        with_results(result("a", "A."), result("b", "B.", enabled=False)),
        # a search result in the model's own message
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [result("a", "A.")]}],
        # a search result without content
        with_results({**result("a", "A."), "content": []}),
        # a citation sent back that names no search result of the request
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "Blue.", "citations": [
                {"type": "search_result_location", "source": "b", "title": "t",
                 "cited_text": "Blue.", "search_result_index": 0,
                 "start_block_index": 0, "end_block_index": 1}]}]},
            {"role": "user", "content": "and?"},
        ],
    ],
    ids=["mixed-citations", "in-assistant", "no-content", "dangling-citation"],
)  # fmt: skip
async def test_search_results_the_api_refuses_are_refused(fa, claude, messages):
    with pytest.raises(anthropic.BadRequestError):
        await claude.messages.create(**ask() | {"messages": messages})
    assert len(fa.invalid) == 1
