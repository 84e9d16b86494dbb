"""The fake's getChatMember against the real PTB: the ChatMember kinds and the refusals."""

import pytest
from telegram import (
    Bot,
    ChatMemberAdministrator,
    ChatMemberBanned,
    ChatMemberLeft,
    ChatMemberMember,
    ChatMemberOwner,
)
from telegram.error import BadRequest, Forbidden

SUPERGROUP = -100_777


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        ("creator", ChatMemberOwner),
        ("administrator", ChatMemberAdministrator),
        ("member", ChatMemberMember),
        ("left", ChatMemberLeft),
        ("kicked", ChatMemberBanned),
    ],
)
async def test_each_status_is_the_ptb_kind_with_its_fields(tg, bot: Bot, status, kind):
    tg.push_message(SUPERGROUP, "hi all", user_id=5, chat_type="supergroup", first_name="Ann")
    tg.set_member_status(SUPERGROUP, 5, status)
    member = await bot.get_chat_member(SUPERGROUP, 5)
    assert type(member) is kind
    assert (member.status, member.user.id, member.user.first_name) == (status, 5, "Ann")
    if isinstance(member, ChatMemberAdministrator):
        assert member.can_manage_chat and not member.is_anonymous


async def test_someone_who_never_wrote_has_left_and_a_writer_is_a_member(tg, bot: Bot):
    tg.push_message(SUPERGROUP, "hi all", user_id=5, chat_type="supergroup")
    assert type(await bot.get_chat_member(SUPERGROUP, 5)) is ChatMemberMember
    assert type(await bot.get_chat_member(SUPERGROUP, 6)) is ChatMemberLeft
    assert (await bot.get_chat_member(SUPERGROUP, tg.bot_id)).user.is_bot


async def test_private_chats_know_only_their_user_and_refusals_are_the_apis(tg, bot: Bot):
    tg.push_message(42, "hi")
    assert type(await bot.get_chat_member(42, 42)) is ChatMemberMember
    with pytest.raises(BadRequest, match=r"(?i)user not found"):
        await bot.get_chat_member(42, 43)
    with pytest.raises(BadRequest, match=r"(?i)invalid user_id specified"):
        await bot.get_chat_member(SUPERGROUP, 0)
    tg.push_bot_added(SUPERGROUP, by_user_id=5, chat_type="supergroup")
    await bot.leave_chat(SUPERGROUP)
    with pytest.raises(Forbidden, match="not a member"):
        await bot.get_chat_member(SUPERGROUP, 5)
    with pytest.raises(ValueError, match="unsupported status"):
        tg.set_member_status(SUPERGROUP, 5, "restricted")
