"""Long conversations: the older part is summarised in one large step, pairs kept whole."""

import re
from itertools import pairwise

import pytest

from bot.agent.history.compaction import choose_cut
from bot.agent.history.ledger import LEDGER_HEADING
from bot.agent.request import SUMMARY_HEADER
from bot.conversations.file_refs import image_tokens
from bot.conversations.snapshot import StoredTurn
from tests.fakes.anthropic_server import NO_CREDITS, Reply, error, text, tool_use
from tests.fakes.media import sample_png
from tests.files_support import push_album_photo
from tests.harness import OWNER

BUDGET = 2_000
SAVED_AS = re.compile(r"Saved as ([A-Za-z0-9]{8})")


def is_summary_request(request: dict) -> bool:
    return isinstance(request.get("system"), str) and "running summary" in request["system"]


def user(i, tokens):
    return StoredTurn(i, "user", [{"type": "text", "text": "x"}], tokens)


def assistant(i, tokens, tool=False):
    block = (
        {"type": "tool_use", "id": f"t{i}", "name": "n", "input": {}}
        if tool
        else {
            "type": "text",
            "text": "y",
        }
    )
    return StoredTurn(i, "assistant", [block], tokens)


def tool_result(i, tokens):
    return StoredTurn(
        i, "user", [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}], tokens
    )


@pytest.fixture
async def small_budget_bot(start_bot):
    """Return the running bot with a history budget small enough to compact quickly."""
    return await start_bot(history_token_budget=BUDGET)


def test_no_cut_under_budget():
    assert choose_cut([user(1, 500), assistant(2, 500)], 2_000) is None


def test_cut_frees_most_of_the_budget_and_never_splits_tool_pairs():
    turns = [
        user(1, 400),
        assistant(2, 400),
        user(3, 400),
        assistant(4, 300, tool=True),
        tool_result(5, 300),
        assistant(6, 300),
        user(7, 300),
        assistant(8, 300),
    ]
    cut = choose_cut(turns, 2_000)
    kept = turns[cut:]
    assert kept[0].role == "user" and kept[0].content[0]["type"] == "text"
    assert sum(t.tokens for t in kept) <= 2_000 * 0.4
    assert cut == 6


def test_a_cut_that_would_land_on_a_tool_result_moves_to_the_next_user_message():
    turns = [
        user(1, 1000),
        assistant(2, 100, tool=True),
        tool_result(3, 100),
        assistant(4, 100),
        user(5, 100),
        assistant(6, 100),
    ]
    # The budget alone would cut at 2, orphaning the tool_result at 2 from its tool_use.
    assert choose_cut(turns, 1000) == 4


async def test_a_long_conversation_is_summarised_and_stays_cached(small_budget_bot):
    bot = small_budget_bot
    model = bot.model
    model.default = lambda request: (
        text("The user asked many questions about gardening.")
        if is_summary_request(request)
        else text("A fairly long answer about plants. " * 10)
    )
    model.script(
        tool_use(
            "add_to_memory",
            {"content": "The user grows tomatoes", "category": "project", "subject": "garden"},
        ),
    )
    for i in range(24):
        await bot.say(OWNER, f"Question {i} about gardening: " + "soil and water " * 20)
    summaries = [r for r in model.requests if is_summary_request(r)]
    chats = [r for r in model.requests if not is_summary_request(r)]
    assert summaries, "the history never got summarised"
    assert len(summaries) <= 4, "compaction should happen in large steps"
    last = chats[-1]
    # The save of the first turn, folded away long ago, is still listed with its id, by code.
    saved_id = SAVED_AS.search(str(chats[1]["messages"])).group(1)
    summary = last["system"][2]["text"].removeprefix(SUMMARY_HEADER)
    assert summary == (
        f"The user asked many questions about gardening.\n\n{LEDGER_HEADING}\n"
        f'- saved [id:{saved_id}] "garden": "The user grows tomatoes"'
    )
    assert len(summaries) >= 2, "the list should be carried over a later compaction"
    assert not any(LEDGER_HEADING in str(r["messages"]) for r in summaries)
    assert len(last["messages"]) < 2 * 24
    assert model.invalid == []
    # Between compactions each request extends the previous one: the cached prefix holds.
    stable = sum(
        1
        for before, after in pairwise(chats)
        if after["messages"][: len(before["messages"]) - 1] == before["messages"][:-1]
        and after["system"] == before["system"]
    )
    assert stable >= len(chats) - 1 - len(summaries)


async def test_when_summarising_fails_the_oldest_turns_are_dropped(small_budget_bot):
    bot = small_budget_bot
    model = bot.model
    model.default = lambda request: (
        error(400, "invalid_request_error", "no summaries today")
        if is_summary_request(request)
        else text("ok " * 50)
    )
    for i in range(12):
        replies = await bot.say(OWNER, f"Message {i}: " + "words " * 150)
        assert replies, f"message {i} was not answered"
    chats = [r for r in model.requests if not is_summary_request(r)]
    assert any(is_summary_request(r) for r in model.requests)
    assert len(chats[-1]["messages"]) < 2 * 12
    assert len(chats[-1]["system"]) == 2  # no summary block


@pytest.mark.parametrize(
    "refusal",
    [
        error(529, "overloaded_error", "Overloaded"),
        # The account's problems: dropping turns would not fix them either.
        NO_CREDITS,
        error(401, "authentication_error", "invalid x-api-key"),
    ],
    ids=["overloaded", "no-credits", "wrong-key"],
)
async def test_when_the_model_is_away_no_history_is_dropped(small_budget_bot, refusal):
    bot = small_budget_bot
    model = bot.model
    away = True
    model.default = lambda request: (
        refusal if away and is_summary_request(request) else text("ok " * 50)
    )
    for i in range(12):
        assert await bot.say(OWNER, f"Message {i}: " + "words " * 150)
    chats = [r for r in model.requests if not is_summary_request(r)]
    assert any(is_summary_request(r) for r in model.requests)
    assert "Message 0:" in str(chats[-1]["messages"][0])  # over budget, but all still there

    away = False
    await bot.say(OWNER, "Message 12: " + "words " * 150)
    chats = [r for r in model.requests if not is_summary_request(r)]
    assert "Message 0:" not in str(chats[-1]["messages"])
    assert len(chats[-1]["system"]) == 3  # folded into a summary this time


def test_turns_newer_than_the_last_answer_are_never_folded():
    # A reply, then five photos sent together: over the budget, but the model has not seen them.
    turns = [user(1, 100), assistant(2, 100), *(user(i, 600) for i in range(3, 8))]
    assert choose_cut(turns, 2_000) == 2
    assert choose_cut(turns[2:], 2_000) is None  # nothing answered: nothing to fold


async def test_photos_sent_together_reach_the_model_and_those_past_the_budget_are_named(
    small_budget_bot,
):
    bot = small_budget_bot
    bot.model.default = lambda request: (
        text("summary") if is_summary_request(request) else text("I see them.")
    )
    photos = [sample_png(330, 340, pad_to=1_000 + i) for i in range(20)]
    each = image_tokens(330, 340)
    fit = BUDGET // each  # the newest photos that fit the budget together
    for n, photo in enumerate(photos):  # two albums of ten, as Telegram sends them together
        push_album_photo(bot.tg, OWNER, photo, f"album-{n // 10}", caption=None if n else "Which?")
    [reply] = await bot.tg.wait_for_messages(OWNER, 1)
    await bot.idle()
    assert not any(is_summary_request(r) for r in bot.model.requests)  # nothing was folded
    assert bot.model.image_data() == photos[-fit:]
    left_out = 20 - fit
    assert f"[{left_out} of the 20 files of this message were left out" in (
        bot.model.last_user_text()
    )
    assert reply["result"]["text"].startswith("I see them.")
    assert f"only {fit} of the 20 files you sent together" in reply["result"]["text"]


QUESTION = "Shall I remember that your sister is called Mia?"
MIA = "The user's sister is called Mia"


def _summarise_as_told(request: dict) -> Reply:
    """Act as a summariser that keeps an open question only when its instructions say so."""
    transcript = request["messages"][0]["content"]
    ends_with_question = transcript.rstrip().endswith(QUESTION)
    if ends_with_question and "still open, not declined" in request["system"]:
        return text(f"The user talked about their family. Still open: {QUESTION} ({MIA}.)")
    return text("The user talked about their family.")


def _answer_the_open_question(request: dict) -> Reply:
    """Act as a model that saves the fact when the summary's open question gets a yes."""
    system = " ".join(block["text"] for block in request["system"])
    said = request["messages"][-1]["content"]
    yes = isinstance(said, list) and said[-1]["type"] == "text" and said[-1]["text"].endswith("Yes")
    if yes and f"Still open: {QUESTION}" in system:
        return tool_use("add_to_memory", {"content": MIA, "category": "person", "subject": "Mia"})
    return text("Noted.")


async def test_a_memory_question_open_at_the_cut_stays_open_and_a_yes_saves(small_budget_bot):
    bot = small_budget_bot
    model = bot.model
    model.default = lambda request: (
        _summarise_as_told(request) if is_summary_request(request) else text("Noted.")
    )
    await bot.say(OWNER, "Some background first: " + "words " * 900)
    # Under the budget before the reply: the long reply and the yes push the history over it,
    # so the question is folded away and the yes is the first message after the cut.
    model.script(text("A long answer about families. " * 100 + QUESTION))
    await bot.say(OWNER, "My sister is called Mia. " + "words " * 800)
    assert not any(is_summary_request(r) for r in model.requests)
    model.default = lambda request: (
        _summarise_as_told(request)
        if is_summary_request(request)
        else _answer_the_open_question(request)
    )
    await bot.say(OWNER, "Yes")
    summaries = [r for r in model.requests if is_summary_request(r)]
    assert len(summaries) == 1
    assert "still open, not declined" in summaries[0]["system"]
    assert summaries[0]["messages"][0]["content"].rstrip().endswith(QUESTION)
    chat = [r for r in model.requests if not is_summary_request(r)][-2]
    assert QUESTION not in str(chat["messages"]), "the question should be folded away"
    assert f"Still open: {QUESTION}" in chat["system"][2]["text"]
    [saved] = await bot.store.list_active(OWNER)
    assert (saved.subject, saved.content) == ("Mia", MIA)
