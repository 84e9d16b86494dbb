"""The user side of FakeTelegram: the messages and updates tests push as if users sent them.

UserSide is a mixin of FakeTelegram and uses its state: _chats, _messages, _topics, _absent,
_migrated, files, and its _next_message_id, _store, _bot_user and push_update.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from tests.fakes.telegram_files import MEDIA_DEFAULTS, FileStore, photo_sizes
from tests.fakes.telegram_html import utf16_len

_MENTION_RE = re.compile(r"(?<![\w@])@[A-Za-z][A-Za-z0-9_]{3,31}\b")

# The fields each kind of MessageOrigin must carry (Bot API "MessageOrigin").
_ORIGIN_FIELDS = {
    "user": ("sender_user",), "hidden_user": ("sender_user_name",), "chat": ("sender_chat",),
    "channel": ("chat", "message_id"),
}  # fmt: skip


class UserSide:
    """Test-side API to queue what users send: text, media, forwards, chat changes."""

    # FakeTelegram's state and methods this mixin uses (declared for the type checker).
    _chats: dict[Any, dict[str, Any]]
    _messages: dict[Any, dict[int, dict[str, Any]]]
    _topics: dict[Any, set[int]]
    _absent: set[Any]
    _migrated: dict[Any, int]
    files: FileStore

    if TYPE_CHECKING:

        def push_update(self, update: dict[str, Any]) -> dict[str, Any]: ...
        def _next_message_id(self, chat_id: Any) -> int: ...
        def _store(self, message: dict[str, Any]) -> None: ...
        def _bot_user(self) -> dict[str, Any]: ...

    def push_message(
        self,
        chat_id: int,
        text: str,
        *,
        user_id: int | None = None,
        chat_type: str = "private",
        first_name: str = "Alice",
        username: str | None = None,
        reply_to_message: dict[str, Any] | int | None = None,
        chat_title: str | None = None,
        message_thread_id: int | None = None,
        forward_origin: dict[str, Any] | None = None,
        quote: str | None = None,
    ) -> dict[str, Any]:
        """Queue an Update with a user's text message; return the update dict.

        message_thread_id puts it in that forum topic (the supergroup becomes a forum, as
        Telegram marks it with is_forum); forward_origin makes it a forward (a MessageOrigin:
        type user/hidden_user/chat/channel, date filled in if missing); quote, with
        reply_to_message, quotes that part of the replied message's text.
        """
        message = self._user_message(
            chat_id, user_id=user_id, chat_type=chat_type, first_name=first_name,
            username=username, reply_to_message=reply_to_message, chat_title=chat_title,
            message_thread_id=message_thread_id, forward_origin=forward_origin, quote=quote,
        )  # fmt: skip
        message["text"] = text
        entities = []
        if text.startswith("/"):
            # PTB's CommandHandler only fires on a bot_command entity at offset 0.
            command = text.split()[0]
            entities.append({"type": "bot_command", "offset": 0, "length": utf16_len(command)})
        entities += _mentions(text)
        if entities:
            message["entities"] = entities
        return self._push_user_message(message)

    def push_photo(
        self,
        chat_id: int,
        data: bytes,
        *,
        caption: str | None = None,
        width: int | None = None,
        height: int | None = None,
        **sender: Any,
    ) -> dict[str, Any]:
        """Queue a user's photo: PhotoSizes from thumbnail to original, each one a file.

        Sizes come from width/height, else from the image header, else 1280x960. Every size
        serves `data` when downloaded (the fake does not scale images); their file_size is
        len(data). `sender` takes push_message's keyword arguments.
        """
        sizes = []
        for w, h in photo_sizes(data, width, height):
            stored = self.files.add(data, kind="photo")
            sizes.append({**stored.fields(), "width": w, "height": h})
        return self._push_media(chat_id, {"photo": sizes}, caption, sender)

    def push_document(
        self,
        chat_id: int,
        data: bytes | None,
        file_name: str,
        mime_type: str,
        *,
        caption: str | None = None,
        size: int | None = None,
        **sender: Any,
    ) -> dict[str, Any]:
        """Queue a user's document (a registered, downloadable file) with an optional caption.

        Without data it is size zero bytes (add_file), so its file_size can pass 20 MB.
        """
        document = self.add_file(data, size=size, file_name=file_name, mime_type=mime_type)
        return self._push_media(chat_id, {"document": document}, caption, sender)

    def push_media(
        self,
        chat_id: int,
        kind: str,
        *,
        data: bytes | None = None,
        file_size: int = 1000,
        caption: str | None = None,
        fields: dict[str, Any] | None = None,
        **sender: Any,
    ) -> dict[str, Any]:
        """Queue a voice/audio/video/video_note/animation/sticker message.

        Its object has the file fields plus typical metadata (telegram_files.MEDIA_DEFAULTS),
        overridden by `fields`. Without data the file is file_size zero bytes.
        """
        if kind not in MEDIA_DEFAULTS:
            raise ValueError(f"unknown media kind {kind!r}; use one of {sorted(MEDIA_DEFAULTS)}")
        media = {**MEDIA_DEFAULTS[kind], **(fields or {})}
        stored = self.files.add(data, kind=kind, size=file_size, mime_type=media.get("mime_type"))
        content: dict[str, Any] = {kind: {**stored.fields(), **media}}
        if kind == "animation":
            # Telegram also sends an animation as a document, for older clients.
            content["document"] = {**stored.fields(), "mime_type": media.get("mime_type")}
        return self._push_media(chat_id, content, caption, sender)

    def add_file(
        self,
        data: bytes | None = None,
        *,
        size: int | None = None,
        mime_type: str | None = None,
        file_name: str | None = None,
        kind: str = "document",
    ) -> dict[str, Any]:
        """Register a file getFile can describe and the download route serve; return its fields.

        Returns file_id, file_unique_id, file_size (and file_name, mime_type when given), the
        fields of a Document. With size instead of data, the file is that many zero bytes, so
        a test can have a 25 MB file without holding it.
        """
        stored = self.files.add(
            data, kind=kind, size=size, file_name=file_name, mime_type=mime_type
        )
        fields = stored.fields()
        if file_name is not None:
            fields["file_name"] = file_name
        if mime_type is not None:
            fields["mime_type"] = mime_type
        return fields

    def push_my_chat_member(
        self,
        chat_id: int,
        *,
        by_user_id: int,
        old_status: str = "left",
        new_status: str = "member",
        chat_type: str = "group",
        chat_title: str | None = None,
        first_name: str = "Alice",
    ) -> dict[str, Any]:
        """Queue a my_chat_member update: the bot's status in a chat changed, by that user.

        Statuses: member, administrator, left, kicked. Becoming a member or administrator
        makes the chat one the bot can send to; left or kicked makes sends fail with 403.
        """
        user = _user(by_user_id, first_name, None)
        chat = self._user_chat(chat_id, chat_type, user, chat_title)
        if new_status in ("left", "kicked"):
            self._absent.add(chat_id)
        else:
            self._absent.discard(chat_id)
        return self.push_update(
            {
                "my_chat_member": {
                    "chat": chat,
                    "from": user,
                    "date": int(time.time()),
                    "old_chat_member": self._bot_member(old_status),
                    "new_chat_member": self._bot_member(new_status),
                }
            }
        )

    def push_bot_added(
        self,
        chat_id: int,
        *,
        by_user_id: int,
        chat_type: str = "group",
        chat_title: str | None = None,
        first_name: str = "Alice",
        status: str = "member",
    ) -> list[dict[str, Any]]:
        """Queue what Telegram sends when a user adds the bot to a group; return the updates.

        That is a my_chat_member update (left -> member) and the service message whose
        new_chat_members lists the bot.
        """
        member = self.push_my_chat_member(
            chat_id, by_user_id=by_user_id, new_status=status, chat_type=chat_type,
            chat_title=chat_title, first_name=first_name,
        )  # fmt: skip
        message = self._user_message(
            chat_id, user_id=by_user_id, chat_type=chat_type, first_name=first_name,
            chat_title=chat_title,
        )  # fmt: skip
        message["new_chat_members"] = [self._bot_user()]
        return [member, self._push_user_message(message)]

    def migrate_group(
        self,
        chat_id: int,
        new_chat_id: int | None = None,
        *,
        by_user_id: int,
        first_name: str = "Alice",
        chat_title: str | None = None,
    ) -> list[dict[str, Any]]:
        """Upgrade a basic group to a supergroup as Telegram does; return the two updates.

        The old group gets a service message with migrate_to_chat_id, the new supergroup one
        with migrate_from_chat_id. From then on every method naming the old id fails with 400
        "Bad Request: group chat was upgraded to a supergroup chat" and
        parameters.migrate_to_chat_id, which PTB raises as telegram.error.ChatMigrated.
        """
        old = self._chats.get(chat_id)
        if old is not None and old["type"] != "group":
            raise ValueError(f"only a basic group can be upgraded, chat {chat_id} is {old['type']}")
        if new_chat_id is None:
            new_chat_id = -(10**12 + abs(chat_id))  # the -100... form of supergroup ids
        title = chat_title or (old or {}).get("title")
        leaving = self._user_message(
            chat_id, user_id=by_user_id, first_name=first_name, chat_type="group",
            chat_title=title,
        )  # fmt: skip
        leaving["migrate_to_chat_id"] = new_chat_id
        arriving = self._user_message(
            new_chat_id, user_id=by_user_id, first_name=first_name, chat_type="supergroup",
            chat_title=title,
        )  # fmt: skip
        arriving["migrate_from_chat_id"] = chat_id
        updates = [self._push_user_message(leaving), self._push_user_message(arriving)]
        self._migrated[chat_id] = new_chat_id
        return updates

    def _user_message(
        self,
        chat_id: int,
        *,
        user_id: int | None = None,
        chat_type: str = "private",
        first_name: str = "Alice",
        username: str | None = None,
        reply_to_message: dict[str, Any] | int | None = None,
        chat_title: str | None = None,
        message_thread_id: int | None = None,
        forward_origin: dict[str, Any] | None = None,
        quote: str | None = None,
    ) -> dict[str, Any]:
        """Build (not queue) a message from a user in a chat, with no content yet."""
        user = _user(chat_id if user_id is None else user_id, first_name, username)
        chat = self._user_chat(chat_id, chat_type, user, chat_title, forum=message_thread_id)
        message: dict[str, Any] = {
            "message_id": self._next_message_id(chat_id),
            "from": user,
            "chat": chat,
            "date": int(time.time()),
        }
        if message_thread_id is not None:
            message.update(message_thread_id=message_thread_id, is_topic_message=True)
            self._topics.setdefault(chat_id, set()).add(message_thread_id)
            if reply_to_message is None and chat_type != "private":
                # In a forum topic every message that replies to nothing else replies to the
                # topic's creation message, whose id is the thread id.
                reply_to_message = self._topic_created(chat, user, message_thread_id)
        if forward_origin is not None:
            message["forward_origin"] = _origin(forward_origin)
        if isinstance(reply_to_message, int):
            reply_to_message = self._messages[chat_id][reply_to_message]
        if reply_to_message is not None:
            message["reply_to_message"] = without_reply(reply_to_message)
        if quote is not None:
            message["quote"] = _quote(reply_to_message, quote)
        return message

    def _user_chat(
        self,
        chat_id: int,
        chat_type: str,
        user: dict[str, Any],
        title: str | None,
        *,
        forum: int | None = None,
    ) -> dict[str, Any]:
        """Build and remember the Chat a user writes in; a thread id makes a supergroup a forum."""
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat.update({k: v for k, v in user.items() if k in ("first_name", "username")})
        else:
            chat["title"] = title or "Test chat"
        was_forum = self._chats.get(chat_id, {}).get("is_forum")
        if chat_type == "supergroup" and (forum is not None or was_forum):
            chat["is_forum"] = True
        self._chats[chat_id] = chat
        return chat

    def _topic_created(
        self, chat: dict[str, Any], user: dict[str, Any], thread: int
    ) -> dict[str, Any]:
        found = self._messages.get(chat["id"], {}).get(thread)
        if found is not None:
            return found
        created = {
            "message_id": thread, "from": user, "chat": chat, "date": int(time.time()),
            "message_thread_id": thread, "is_topic_message": True,
            "forum_topic_created": {"name": f"Topic {thread}", "icon_color": 7322096},
        }  # fmt: skip
        self._store(created)
        return created

    def _push_media(
        self, chat_id: int, content: dict[str, Any], caption: str | None, sender: dict[str, Any]
    ) -> dict[str, Any]:
        message = self._user_message(chat_id, **sender)
        message.update(content)
        if caption:
            message["caption"] = caption
            if entities := _mentions(caption):
                message["caption_entities"] = entities
        return self._push_user_message(message)

    def _push_user_message(self, message: dict[str, Any]) -> dict[str, Any]:
        self._store(message)
        return self.push_update({"message": message})

    def _bot_member(self, status: str) -> dict[str, Any]:
        """Return the bot's ChatMember object with a given status."""
        member: dict[str, Any] = {"status": status, "user": self._bot_user()}
        if status == "kicked":
            member["until_date"] = 0
        elif status == "administrator":
            member.update(
                can_be_edited=False, is_anonymous=False, can_manage_chat=True,
                can_delete_messages=False, can_manage_video_chats=False,
                can_restrict_members=False, can_promote_members=False, can_change_info=False,
                can_invite_users=True, can_post_stories=False, can_edit_stories=False,
                can_delete_stories=False,
            )  # fmt: skip
        elif status not in ("member", "left"):
            raise ValueError(f"unsupported status {status!r}: member, administrator, left, kicked")
        return member


def _user(user_id: int, first_name: str, username: str | None) -> dict[str, Any]:
    user: dict[str, Any] = {
        "id": user_id, "is_bot": False, "first_name": first_name, "language_code": "en",
    }  # fmt: skip
    if username:
        user["username"] = username
    return user


def _mentions(text: str) -> list[dict[str, Any]]:
    """Return the mention entities Telegram marks in incoming text (@usernames)."""
    return [
        {
            "type": "mention",
            "offset": utf16_len(text[: match.start()]),
            "length": utf16_len(match.group()),
        }
        for match in _MENTION_RE.finditer(text)
    ]


def _origin(origin: dict[str, Any]) -> dict[str, Any]:
    """Check a test's MessageOrigin and fill in its date."""
    required = _ORIGIN_FIELDS.get(str(origin.get("type")))
    if required is None:
        raise ValueError(f"forward_origin type must be one of {sorted(_ORIGIN_FIELDS)}")
    missing = [field for field in required if field not in origin]
    if missing:
        raise ValueError(f"a {origin['type']} forward_origin needs {', '.join(missing)}")
    return {"date": int(time.time()) - 3600, **origin}


def _quote(replied: dict[str, Any] | None, quote: str) -> dict[str, Any]:
    """Return the TextQuote of a part of the replied message's text, as Telegram sends it."""
    replied_text = (replied or {}).get("text") or (replied or {}).get("caption") or ""
    if not quote or quote not in replied_text:
        raise ValueError("quote must be a part of the text of the message replied to")
    position = utf16_len(replied_text[: replied_text.index(quote)])
    return {"text": quote, "position": position, "is_manual": True}


def without_reply(message: dict[str, Any]) -> dict[str, Any]:
    # Telegram nests reply_to_message only one level deep.
    return {k: v for k, v in message.items() if k != "reply_to_message"}
