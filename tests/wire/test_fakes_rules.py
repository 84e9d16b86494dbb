"""FakeTelegram's drafts and chat rules, through PTB's real Bot."""

import time

import pytest
from telegram import MessageEntity
from telegram.error import BadRequest, ChatMigrated, Forbidden, InvalidToken

GROUP, SUPERGROUP = -4001, -1001234567890


async def next_update(bot):
    """Return the next pending update, read by PTB, and confirm it."""
    (update,) = await bot.get_updates(timeout=1, limit=1)
    await bot.get_updates(offset=update.update_id + 1, timeout=0)
    return update


# --- sendMessageDraft ----------------------------------------------------------------------


async def test_drafts_grow_and_are_recorded_with_times(tg, bot):
    tg.push_message(42, "hi")
    before = time.monotonic()
    assert await bot.send_message_draft(42, 7) is True  # empty text: "Thinking..."
    assert await bot.send_message_draft(42, 7, "<b>Hel</b>", parse_mode="HTML")
    assert await bot.send_message_draft(
        42, 7, "Hello there", entities=[MessageEntity("bold", 0, 5)]
    )
    assert tg.drafts_to(42) == ["", "Hel", "Hello there"]
    assert tg.drafts[1]["entities"] == [{"type": "bold", "offset": 0, "length": 3}]
    assert [d["draft_id"] for d in tg.drafts] == [7, 7, 7]
    times = [d["at"] for d in tg.drafts]
    assert before <= times[0] <= times[1] <= times[2] <= time.monotonic()
    assert tg.shown_drafts[42]["text"] == "Hello there"
    # Drafts are not messages; the final sendMessage persists the answer and replaces the draft.
    assert tg.sent == []
    await bot.send_message(42, "Hello there, Alice")
    assert 42 not in tg.shown_drafts


@pytest.mark.parametrize(
    ("chat_id", "draft_id", "text", "expected"),
    [
        (SUPERGROUP, 1, "x", "Textdraft_peer_invalid"),
        (GROUP, 1, "x", "Textdraft_peer_invalid"),
        (42, 0, "x", "Random_id_invalid"),
        (42, 1, "x" * 4097, "Message is too long"),
        (42, 1, "<b>x", "Can't parse entities"),
    ],
)
async def test_drafts_are_refused_like_telegram(tg, bot, chat_id, draft_id, text, expected):
    mode = "HTML" if text.startswith("<") else None
    with pytest.raises(BadRequest, match=expected):
        await bot.send_message_draft(chat_id, draft_id, text, parse_mode=mode)
    assert tg.drafts == [] and tg.rejected[0][0] == "sendMessageDraft"


async def test_draft_refusal_switch_for_fallback_tests(tg, bot):
    tg.fail_always("sendMessageDraft")
    for _ in range(2):
        # PTB raises InvalidToken for any 404, an unknown method included (EndPointNotFound
        # only comes from Bot.do_api_request): fallback code must catch that.
        with pytest.raises(InvalidToken, match="Not Found: method not found"):
            await bot.send_message_draft(42, 1, "x")
    tg.fail_always(
        "sendMessageDraft", status=400, description="Bad Request: TEXTDRAFT_PEER_INVALID"
    )
    with pytest.raises(BadRequest, match="Textdraft_peer_invalid"):
        await bot.send_message_draft(42, 1, "x")
    tg.allow("sendMessageDraft")
    await bot.send_message_draft(42, 1, "x")
    assert tg.drafts_to(42) == ["x"] and len(tg.rejected) == 3


# --- forum topics --------------------------------------------------------------------------


async def test_topic_messages_and_replies_into_the_topic(tg, bot):
    tg.push_message(SUPERGROUP, "@memory_test_bot hi", chat_type="supergroup", message_thread_id=5)
    message = (await next_update(bot)).message
    assert message.is_topic_message and message.message_thread_id == 5
    assert message.chat.is_forum
    # Telegram makes a topic message reply to the topic's creation message.
    assert message.reply_to_message.forum_topic_created.name == "Topic 5"
    sent = await bot.send_message(SUPERGROUP, "hello", message_thread_id=5)
    assert sent.message_thread_id == 5 and sent.is_topic_message
    assert tg.sent[0]["message_thread_id"] == 5
    document = await bot.send_document(SUPERGROUP, b"x", filename="a.txt", message_thread_id=5)
    assert document.message_thread_id == 5
    await bot.send_chat_action(SUPERGROUP, "typing", message_thread_id=5)
    assert tg.chat_actions == [{"chat_id": SUPERGROUP, "action": "typing", "message_thread_id": 5}]


async def test_unknown_threads_are_refused(tg, bot):
    tg.push_message(SUPERGROUP, "hi", chat_type="supergroup", message_thread_id=5)
    with pytest.raises(BadRequest, match="Message thread not found"):
        await bot.send_message(SUPERGROUP, "hello", message_thread_id=6)
    with pytest.raises(BadRequest, match="Message thread not found"):
        await bot.send_chat_action(SUPERGROUP, "typing", message_thread_id=6)
    with pytest.raises(BadRequest, match="Message thread not found"):
        await bot.send_message(42, "hello", message_thread_id=5)


async def test_private_topic_drafts(tg, bot):
    tg.push_message(42, "hi", message_thread_id=3)
    message = (await next_update(bot)).message
    assert message.message_thread_id == 3 and message.reply_to_message is None
    await bot.send_message_draft(42, 9, "Thinking about it", message_thread_id=3)
    assert tg.drafts[0]["message_thread_id"] == 3
    with pytest.raises(BadRequest, match="Message thread not found"):
        await bot.send_message_draft(42, 9, "x", message_thread_id=4)


# --- forwards, quotes, replies -------------------------------------------------------------


@pytest.mark.parametrize(
    ("origin", "check"),
    [
        (
            {"type": "user", "sender_user": {"id": 5, "is_bot": False, "first_name": "Eve"}},
            lambda o: o.sender_user.first_name == "Eve",
        ),
        (
            {"type": "hidden_user", "sender_user_name": "Mallory"},
            lambda o: o.sender_user_name == "Mallory",
        ),
        (
            {"type": "chat", "sender_chat": {"id": -77, "type": "group", "title": "Club"}},
            lambda o: o.sender_chat.title == "Club",
        ),
        (
            {"type": "channel", "chat": {"id": -1009, "type": "channel", "title": "News"},
             "message_id": 12, "author_signature": "Ed"},
            lambda o: (o.chat.title, o.message_id) == ("News", 12),
        ),
    ],
)  # fmt: skip
async def test_forwarded_messages_carry_their_origin(tg, bot, origin, check):
    tg.push_message(42, "look at this", forward_origin=origin)
    forwarded = (await next_update(bot)).message.forward_origin
    assert forwarded.type == origin["type"] and check(forwarded)
    assert forwarded.date.timestamp() < time.time()


async def test_bad_forward_origins_are_test_errors(tg):
    with pytest.raises(ValueError, match="needs sender_user"):
        tg.push_message(42, "x", forward_origin={"type": "user"})
    with pytest.raises(ValueError, match="type must be one of"):
        tg.push_message(42, "x", forward_origin={"type": "pigeon"})


async def test_reply_to_another_user_with_a_quote(tg, bot):
    first = tg.push_message(GROUP, "I love green tea in the morning", chat_type="group",
                            user_id=7, first_name="Bob")  # fmt: skip
    await next_update(bot)
    tg.push_message(GROUP, "@memory_test_bot remember that", chat_type="group", user_id=111,
                    reply_to_message=first["message"]["message_id"], quote="green tea")  # fmt: skip
    message = (await next_update(bot)).message
    assert message.reply_to_message.from_user.first_name == "Bob"
    assert (message.quote.text, message.quote.position) == ("green tea", 7)
    assert message.quote.is_manual
    with pytest.raises(ValueError, match="quote must be a part"):
        tg.push_message(GROUP, "x", chat_type="group", reply_to_message=1, quote="coffee")


# --- group upgrades ------------------------------------------------------------------------


async def test_group_upgrade_messages_and_the_old_id_refused(tg, bot):
    tg.push_message(GROUP, "hi", chat_type="group", chat_title="Family")
    await next_update(bot)
    await bot.send_message(GROUP, "hello")
    updates = tg.migrate_group(GROUP, SUPERGROUP, by_user_id=111)
    leaving, arriving = (await next_update(bot)).message, (await next_update(bot)).message
    assert leaving.chat.id == GROUP and leaving.migrate_to_chat_id == SUPERGROUP
    assert arriving.chat.type == "supergroup" and arriving.migrate_from_chat_id == GROUP
    assert arriving.chat.title == "Family"
    assert [u["message"]["message_id"] for u in updates] == [
        leaving.message_id,
        arriving.message_id,
    ]
    with pytest.raises(ChatMigrated) as caught:
        await bot.send_message(GROUP, "still there?")
    assert caught.value.new_chat_id == SUPERGROUP
    assert tg.rejected[-1][2] == "Bad Request: group chat was upgraded to a supergroup chat"
    with pytest.raises(ChatMigrated):
        await bot.send_chat_action(GROUP, "typing")
    await bot.send_message(SUPERGROUP, "moved")
    assert tg.messages_to(SUPERGROUP) == ["moved"]


async def test_only_basic_groups_upgrade(tg):
    tg.push_message(SUPERGROUP, "hi", chat_type="supergroup")
    with pytest.raises(ValueError, match="only a basic group"):
        tg.migrate_group(SUPERGROUP, by_user_id=1)
    tg.migrate_group(GROUP, by_user_id=1)
    assert str(tg._migrated[GROUP]).startswith("-100")


# --- membership ----------------------------------------------------------------------------


async def test_bot_added_to_a_group(tg, bot):
    member, _ = tg.push_bot_added(GROUP, by_user_id=111, chat_title="Family")
    update = await next_update(bot)
    change = update.my_chat_member
    assert change.from_user.id == 111 and change.chat.title == "Family"
    assert (change.old_chat_member.status, change.new_chat_member.status) == ("left", "member")
    assert change.new_chat_member.user.id == tg.bot_id
    joined = (await next_update(bot)).message
    assert [u.id for u in joined.new_chat_members] == [tg.bot_id]
    assert update.update_id == member["update_id"]


async def test_admin_and_kicked_statuses_parse(tg, bot):
    tg.push_my_chat_member(
        SUPERGROUP, by_user_id=1, chat_type="supergroup", new_status="administrator"
    )
    assert (await next_update(bot)).my_chat_member.new_chat_member.can_manage_chat
    tg.push_my_chat_member(SUPERGROUP, by_user_id=1, chat_type="supergroup",
                           old_status="administrator", new_status="kicked")  # fmt: skip
    assert (await next_update(bot)).my_chat_member.new_chat_member.status == "kicked"
    with pytest.raises(Forbidden, match="bot is not a member of the supergroup chat"):
        await bot.send_message(SUPERGROUP, "hi")
    with pytest.raises(ValueError, match="unsupported status"):
        tg.push_my_chat_member(SUPERGROUP, by_user_id=1, new_status="restricted")


async def test_leave_chat_is_recorded_and_ends_sending(tg, bot):
    tg.push_bot_added(SUPERGROUP, by_user_id=111, chat_type="supergroup")
    await bot.send_message(SUPERGROUP, "hello all")
    assert await bot.leave_chat(SUPERGROUP) is True
    assert tg.left_chats == [SUPERGROUP]
    with pytest.raises(Forbidden, match="not a member"):
        await bot.send_message(SUPERGROUP, "still here?")
    with pytest.raises(Forbidden):
        await bot.leave_chat(SUPERGROUP)
    with pytest.raises(BadRequest, match="private chats"):
        await bot.leave_chat(42)
    tg.push_bot_added(SUPERGROUP, by_user_id=111, chat_type="supergroup")
    await bot.send_message(SUPERGROUP, "back")
    assert tg.messages_to(SUPERGROUP) == ["hello all", "back"]


async def test_blocked_in_private(tg, bot):
    tg.push_my_chat_member(42, by_user_id=42, chat_type="private", old_status="member",
                           new_status="kicked")  # fmt: skip
    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.send_message(42, "hi")
