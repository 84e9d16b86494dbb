"""Chat members for FakeTelegram: getChatMember, answered as the Bot API answers it.

MemberSide is a mixin of FakeTelegram and uses its state: _messages, its _target_chat (which
refuses upgraded groups and chats the bot is not in) and _bot_user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# Bot API "ChatMemberAdministrator": every right is a required field.
_ADMIN_RIGHTS = (
    "can_manage_chat", "can_delete_messages", "can_manage_video_chats", "can_restrict_members",
    "can_promote_members", "can_change_info", "can_invite_users", "can_post_stories",
    "can_edit_stories", "can_delete_stories",
)  # fmt: skip
STATUSES = ("creator", "administrator", "member", "left", "kicked")


def chat_member(user: dict[str, Any], status: str) -> dict[str, Any]:
    """Return a ChatMember object of a status with the fields the Bot API always sends."""
    member: dict[str, Any] = {"status": status, "user": user}
    if status == "creator":
        member["is_anonymous"] = False
    elif status == "administrator":
        member.update(can_be_edited=False, is_anonymous=False)
        member.update(dict.fromkeys(_ADMIN_RIGHTS, True))
    elif status == "kicked":
        member["until_date"] = 0  # banned for good
    elif status not in ("member", "left"):
        raise ValueError(f"unsupported status {status!r}: one of {', '.join(STATUSES)}")
    return member


class MemberSide:
    """Who is what in a chat (set by tests), and getChatMember."""

    _messages: dict[Any, dict[int, dict[str, Any]]]
    # (chat id, user id) -> status; a user not set here is a member once they wrote there.
    member_statuses: dict[tuple[Any, int], str]

    if TYPE_CHECKING:

        def _target_chat(self, chat_id: Any) -> dict[str, Any]: ...
        def _bot_user(self) -> dict[str, Any]: ...
        def _refuse(self, description: str) -> Exception: ...

    def set_member_status(self, chat_id: Any, user_id: int, status: str) -> None:
        """Make a user a creator, administrator, member, left or kicked member of a chat."""
        chat_member({}, status)  # refuses an unknown status now, not at the bot's call
        self.member_statuses[(chat_id, user_id)] = status

    def _user_seen(self, chat_id: Any, user_id: int) -> dict[str, Any] | None:
        """Return a user as their newest message in the chat shows them, if they wrote."""
        for message in reversed(list(self._messages.get(chat_id, {}).values())):
            sender = message.get("from")
            if sender is not None and sender["id"] == user_id:
                return sender
        return None

    def _get_chat_member(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._target_chat(params.get("chat_id"))
        user_id = params.get("user_id")
        if not isinstance(user_id, int) or user_id <= 0:
            raise self._refuse("invalid user_id specified")
        if user_id == self._bot_user()["id"]:
            return chat_member(self._bot_user(), "member")
        seen = self._user_seen(chat["id"], user_id)
        if chat["type"] == "private":
            if user_id != chat["id"]:
                raise self._refuse("user not found")
            return chat_member(seen or _stranger(user_id), "member")
        status = self.member_statuses.get((chat["id"], user_id))
        if status is None:
            # Someone who never wrote in the group: the Bot API says they left (or never came).
            status = "member" if seen is not None else "left"
        return chat_member(seen or _stranger(user_id), status)


def _stranger(user_id: int) -> dict[str, Any]:
    """Return a User the fake knows nothing more about."""
    return {"id": user_id, "is_bot": False, "first_name": "User"}
