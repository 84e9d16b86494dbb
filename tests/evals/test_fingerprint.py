"""The hash covers the instructions and the tools as sent, and nothing else."""

from evals.fingerprint import fingerprint, first_fingerprint
from evals.transcript import Exchange

TOOLS = [{"name": "add_to_memory", "description": "Save.", "input_schema": {"type": "object"}}]


def request(instructions="Be brief.", block="## Your Memory", tools=TOOLS, text="hi") -> dict:
    body = {
        "system": [{"type": "text", "text": instructions}, {"type": "text", "text": block}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
    }
    return body | ({"tools": tools} if tools else {})


def test_it_changes_with_the_instructions_and_the_tools_only():
    base = fingerprint(request())
    assert len(base) == 64
    assert fingerprint(request(block="## Your Memory\n- [id:a1b2c3d4] x", text="yo")) == base
    assert fingerprint(request(instructions="Be very brief.")) != base
    changed = [{**TOOLS[0], "description": "Save, after asking."}]
    assert fingerprint(request(tools=changed)) != base
    assert fingerprint(request(tools=None)) != base


def test_the_first_request_offering_tools_is_the_one_hashed():
    summary = Exchange(1, {"system": "Summarise.", "messages": []}, {})
    off = Exchange(1, request(tools=None), {})
    on = Exchange(2, request(), {})
    assert first_fingerprint([summary, off, on]) == fingerprint(request())
    assert first_fingerprint([summary, off]) == fingerprint(request(tools=None))
    assert first_fingerprint([summary]) is None
