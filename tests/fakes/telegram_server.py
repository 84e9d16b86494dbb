"""A fake Telegram Bot API server that records what it was asked.

It speaks the real wire format, so an unmodified PTB ``Bot``/``Application`` can talk to it via
``base_url`` (and ``base_file_url`` for downloads). Replies are validated the way Telegram
validates them (HTML entities, length, inline keyboards, drafts, forum topics, upgraded groups,
chats the bot left), so a test that passes here would not be refused by the real API.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
import urllib.parse
from collections.abc import Callable
from typing import Any, Self

import aiohttp
from aiohttp import web

from tests.fakes.telegram_files import (
    MAX_DOWNLOAD_BYTES,
    FileStore,
)
from tests.fakes.telegram_html import (
    MAX_CAPTION_LENGTH,
    MAX_MESSAGE_LENGTH,
    HTMLParseError,
    mangled,
    parse_html,
    strip_text,
    utf16_len,
)
from tests.fakes.telegram_members import MemberSide
from tests.fakes.telegram_rich import RichSide
from tests.fakes.telegram_users import UserSide, without_reply

__all__ = [
    "MAX_CAPTION_LENGTH",
    "MAX_MESSAGE_LENGTH",
    "FakeTelegram",
    "HTMLParseError",
    "check_reply_markup",
    "format_text",
    "mangled",
    "parse_html",
    "utf16_len",
]

# Parameters that are plain strings on the wire; everything else PTB JSON-encodes.
_STRING_PARAMS = frozenset(
    {
        "text", "caption", "parse_mode", "url", "secret_token", "callback_query_id",
        "inline_message_id", "business_connection_id", "language_code", "action",
        "ip_address", "document", "description", "short_description", "name",
        "message_effect_id", "emoji", "query", "title",
    }
)  # fmt: skip

_BUTTON_ACTIONS = (
    "url", "callback_data", "web_app", "login_url", "switch_inline_query",
    "switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "copy_text",
    "callback_game", "pay",
)  # fmt: skip

_CHAT_ACTIONS = frozenset(
    {
        "typing", "upload_photo", "record_video", "upload_video", "record_voice",
        "upload_voice", "upload_document", "choose_sticker", "find_location",
        "record_video_note", "upload_video_note",
    }
)  # fmt: skip

_COMMAND_RE = re.compile(r"^[a-z0-9_]{1,32}$")

# Update types Telegram sends when allowed_updates is empty (it withholds these three).
_OPT_IN_UPDATES = frozenset({"chat_member", "message_reaction", "message_reaction_count"})


class _ApiError(Exception):
    """A Bot API error answer."""

    def __init__(
        self,
        status: int,
        description: str,
        retry_after: int | None = None,
        parameters: dict[str, Any] | None = None,
    ):
        super().__init__(description)
        self.status, self.description, self.retry_after = status, description, retry_after
        self.parameters = dict(parameters or {})
        if retry_after is not None:
            self.parameters["retry_after"] = retry_after

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "ok": False, "error_code": self.status, "description": self.description,
        }  # fmt: skip
        if self.parameters:
            body["parameters"] = self.parameters
        return body


def _bad(description: str) -> _ApiError:
    return _ApiError(400, f"Bad Request: {description}")


def format_text(
    text: Any,
    parse_mode: Any,
    entities: Any = None,
    *,
    caption: bool = False,
    allow_empty: bool | None = None,
    dropped: list[str] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """Turn sendMessage-style text into Telegram's (text, entities), raising _ApiError.

    Captions may be empty and have their own limit; allow_empty overrides the first rule.
    What Telegram would silently drop (forbidden nesting, bad links) is added to dropped.
    """
    text = "" if text is None else str(text)
    mode = (parse_mode or "").lower()
    if mode == "html":
        try:
            text, parsed = parse_html(text)
        except HTMLParseError as exc:
            raise _bad(f"can't parse entities: {exc}") from None
    elif mode in ("markdown", "markdownv2"):
        raise _bad(f"parse_mode {parse_mode} is not supported by FakeTelegram; use HTML")
    elif mode:
        raise _bad("unsupported parse_mode")
    else:
        parsed = list(entities) if isinstance(entities, list) else []
    if dropped is not None:
        dropped.extend(mangled(parsed))
    text, parsed = strip_text(text, parsed)
    if not text and not (caption if allow_empty is None else allow_empty):
        raise _bad("message text is empty")
    if utf16_len(text) > (MAX_CAPTION_LENGTH if caption else MAX_MESSAGE_LENGTH):
        raise _bad("message caption is too long" if caption else "message is too long")
    return text, parsed


def check_reply_markup(markup: Any) -> dict[str, Any] | None:
    """Validate reply_markup; return it if it is an inline keyboard (echoed in the Message)."""
    if markup is None:
        return None
    if isinstance(markup, str):
        try:
            markup = json.loads(markup)
        except ValueError:
            markup = None
    if not isinstance(markup, dict):
        raise _bad("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" not in markup:
        return None
    rows = markup["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise _bad('field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays')
    for button in itertools.chain.from_iterable(rows):
        if not isinstance(button, dict) or not isinstance(button.get("text"), str):
            raise _bad('can\'t parse inline keyboard button: Field "text" must be of type String')
        if sum(key in button for key in _BUTTON_ACTIONS) != 1:
            raise _bad(
                "can't parse inline keyboard button: Text buttons are unallowed in the inline "
                "keyboard"
            )
        data = button.get("callback_data")
        if data is not None and not 1 <= len(str(data).encode("utf-8")) <= 64:
            raise _bad("BUTTON_DATA_INVALID")
    return markup


def _decode_param(key: str, value: Any) -> Any:
    """Undo PTB's JSON-encoding of non-string parameter values."""
    if not isinstance(value, str) or key in _STRING_PARAMS:
        return value
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    # A JSON string literal was meant as the raw string itself.
    return value if isinstance(decoded, str) else decoded


class FakeTelegram(UserSide, MemberSide, RichSide):
    """A Bot API server on 127.0.0.1 that records calls and answers like Telegram."""

    def __init__(
        self,
        token: str = "123456:TEST-TOKEN",
        bot_id: int = 1000,
        bot_username: str = "memory_test_bot",
        *,
        latency: float = 0.0,
    ):
        self.token, self.bot_id, self.bot_username = token, bot_id, bot_username
        self.latency = latency  # seconds added before answering anything but getUpdates
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.sent: list[dict[str, Any]] = []
        self.edits: list[dict[str, Any]] = []
        self.documents: list[dict[str, Any]] = []
        self.rejected: list[tuple[str, dict[str, Any], str]] = []
        # What Telegram would have dropped from accepted formatting (it does so silently).
        self.mangled: list[str] = []
        # Accepted sendMessageDraft calls: chat_id, draft_id, text, entities,
        # message_thread_id, params, and `at` (time.monotonic() when it was accepted).
        self.drafts: list[dict[str, Any]] = []
        # The draft each private chat shows now; any message the bot sends there removes it.
        self.shown_drafts: dict[Any, dict[str, Any]] = {}
        self.rich: list[dict[str, Any]] = []  # accepted sendRichMessage calls (telegram_rich)
        self.rich_edits: list[dict[str, Any]] = []  # editMessageText with rich_message
        self.stops: list[dict[str, Any]] = []  # presses of Stop on drafts (press_stop)
        self.files = FileStore()
        self.downloads: list[str] = []  # file_id of each file served by the download route
        self.left_chats: list[Any] = []  # chat ids the bot left with leaveChat, in order
        self.deleted: list[tuple[Any, int]] = []  # (chat id, message id) of deleted messages
        self.chat_actions: list[dict[str, Any]] = []
        self.callback_answers: list[dict[str, Any]] = []
        self.member_statuses: dict[tuple[Any, int], str] = {}
        self.commands: dict[str, list[dict[str, Any]]] = {}
        self.webhook: dict[str, Any] | None = None
        self.updates: list[dict[str, Any]] = []  # queued, not yet confirmed by an offset
        self._update_ids = itertools.count(1)
        self._messages: dict[Any, dict[int, dict[str, Any]]] = {}
        self._message_ids: dict[Any, itertools.count[int]] = {}
        self._chats: dict[Any, dict[str, Any]] = {}
        self._faults: dict[str, list[_ApiError]] = {}
        self._refusals: dict[str, _ApiError] = {}  # persistent, by lower-cased method
        # sendMessage calls whose text holds these words wait (after being recorded) until
        # drop_held(), which answers them as a gateway that lost them would.
        self._hold_words: str | None = None
        self._dropped = asyncio.Event()
        self._disabled: set[str] = set()  # lower-cased methods answered as unknown
        self._held: dict[str, asyncio.Event] = {}  # lower-cased methods answered on release
        self._topics: dict[Any, set[int]] = {}  # message_thread_id values known per chat
        self._migrated: dict[Any, int] = {}  # old group id -> its supergroup's id
        self._absent: set[Any] = set()  # chats the bot is not (or no longer) a member of
        self._allowed_updates: list[str] = []
        self._poll_generation = 0
        self._closing = False
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._methods: dict[str, tuple[str, Callable[[dict[str, Any]], Any]]] = {
            name.lower(): (name, handler)
            for name, handler in {
                "getMe": self._get_me,
                "getUpdates": self._get_updates,
                "setWebhook": self._set_webhook,
                "deleteWebhook": self._delete_webhook,
                "getWebhookInfo": self._get_webhook_info,
                "sendMessage": self._send_message,
                "editMessageText": self._edit_message_text,
                "editMessageReplyMarkup": self._edit_message_reply_markup,
                "sendChatAction": self._send_chat_action,
                "setMyCommands": self._set_my_commands,
                "getMyCommands": self._get_my_commands,
                "deleteMyCommands": self._delete_my_commands,
                "answerCallbackQuery": self._answer_callback_query,
                "sendDocument": self._send_document,
                "sendMessageDraft": self._send_message_draft,
                "sendRichMessage": self._send_rich_message,
                "sendRichMessageDraft": self._send_rich_message_draft,
                "getFile": self._get_file,
                "leaveChat": self._leave_chat,
                "deleteMessage": self._delete_message,
                "getChatMember": self._get_chat_member,
                "close": self._true,
                "logOut": self._true,
            }.items()
        }

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> Self:
        """Start serving on an ephemeral port."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        # handler_cancellation: a long poll whose client hung up must not linger.
        self._runner = web.AppRunner(
            app, access_log=None, shutdown_timeout=1.0, handler_cancellation=True
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = self._runner.addresses[0][1]
        self._closing = False
        return self

    async def stop(self) -> None:
        """Release pending long polls and shut the server down."""
        self._closing = True
        self._notify()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @property
    def base_url(self) -> str:
        """Return the value for PTB's base_url (PTB appends the token)."""
        return f"http://127.0.0.1:{self._port}/bot"

    @property
    def base_file_url(self) -> str:
        """Return the value for PTB's base_file_url."""
        return f"http://127.0.0.1:{self._port}/file/bot"

    # --- test-side API ---------------------------------------------------------------------

    def push_update(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue an arbitrary update for getUpdates, assigning update_id if missing."""
        if "update_id" not in update:
            update["update_id"] = next(self._update_ids)
        else:
            # Keep later automatic ids above an explicit one.
            self._update_ids = itertools.count(max(update["update_id"] + 1, next(self._update_ids)))
        self.updates.append(update)
        self._notify()
        return update

    def hold(self, method: str) -> None:
        """Keep calls to method unanswered until release(method), as a slow server does."""
        self._held.setdefault(method.lower(), asyncio.Event())

    def release(self, method: str) -> None:
        """Answer the held calls to method, and the later ones at once."""
        if (held := self._held.pop(method.lower(), None)) is not None:
            held.set()

    def fail_next(
        self,
        method: str,
        *,
        status: int = 429,
        description: str | None = None,
        retry_after: int | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next `times` calls to method with this error instead."""
        if status == 429 and retry_after is None:
            retry_after = 1
        if description is None:
            description = (
                f"Too Many Requests: retry after {retry_after}"
                if status == 429
                else "Bad Request: injected failure"
            )
        error = _ApiError(status, description, retry_after)
        self._faults.setdefault(method.lower(), []).extend([error] * times)

    def fail_always(
        self, method: str, *, status: int = 404, description: str | None = None
    ) -> None:
        """Answer every call to method with this error until allow(method) is called.

        404 answers "Not Found: method not found", as a Bot API server too old to know the
        method does (e.g. sendMessageDraft before Bot API 9.3); other statuses answer with
        description, by default "Bad Request: injected failure".
        """
        self.allow(method)
        if status == 404 and description is None:
            self._disabled.add(method.lower())
            return
        description = description or "Bad Request: injected failure"
        self._refusals[method.lower()] = _ApiError(status, description)

    def hold_messages(self, words: str) -> None:
        """Keep every sendMessage whose text holds words waiting, unanswered, until drop_held()."""
        self._hold_words, self._dropped = words, asyncio.Event()

    def drop_held(self) -> None:
        """Answer the held sendMessage calls (and stop holding) with 502: none was delivered."""
        self._hold_words = None
        self._dropped.set()

    async def _hold(self, name: str, params: dict[str, Any]) -> None:
        """Wait while a sendMessage call is held; raise a 502 when it is dropped."""
        words = self._hold_words
        if name != "sendMessage" or words is None or words not in str(params.get("text", "")):
            return
        await self._dropped.wait()
        raise _ApiError(502, "Bad Gateway")

    def allow(self, method: str) -> None:
        """Stop refusing a method that fail_always refused."""
        self._disabled.discard(method.lower())
        self._refusals.pop(method.lower(), None)

    def drafts_to(self, chat_id: Any) -> list[str]:
        """Return the texts of accepted sendMessageDraft calls to chat_id, in order."""
        return [d["text"] for d in self.drafts if d["chat_id"] == chat_id]

    def messages_to(self, chat_id: Any) -> list[str]:
        """Return the texts of accepted sendMessage calls to chat_id, in order."""
        return [m["result"]["text"] for m in self.sent if m.get("chat_id") == chat_id]

    def message(self, chat_id: Any, message_id: int) -> dict[str, Any]:
        """Return the current state of a stored message (edits applied)."""
        return self._messages[chat_id][message_id]

    async def wait_for_messages(
        self,
        chat_id: Any = None,
        count: int = 1,
        timeout: float = 10.0,  # noqa: ASYNC109
    ) -> list[dict[str, Any]]:
        """Wait until `count` messages were accepted for chat_id (any chat if None)."""

        def matching() -> list[dict[str, Any]]:
            return [m for m in self.sent if chat_id is None or m.get("chat_id") == chat_id]

        if not await self._wait_until(lambda: len(matching()) >= count, timeout):
            where = "any chat" if chat_id is None else f"chat {chat_id}"
            raise AssertionError(
                f"expected {count} message(s) to {where} within {timeout}s, got "
                f"{[m['result']['text'] for m in matching()]}; all sent: "
                f"{[(m.get('chat_id'), m['result']['text']) for m in self.sent]}; "
                f"rejected: {[(m, why) for m, _, why in self.rejected]}; "
                f"other calls: {[m for m, _ in self.calls if m != 'getUpdates']}"
            )
        return matching()

    async def wait_for_call(
        self,
        method: str,
        count: int = 1,
        timeout: float = 10.0,  # noqa: ASYNC109
    ) -> list[dict[str, Any]]:
        """Wait until method was called `count` times; return the params of those calls."""

        def matching() -> list[dict[str, Any]]:
            return [p for m, p in self.calls if m.lower() == method.lower()]

        if not await self._wait_until(lambda: len(matching()) >= count, timeout):
            raise AssertionError(
                f"expected {count} {method} call(s) within {timeout}s, got {len(matching())}; "
                f"calls: {[m for m, _ in self.calls]}; rejected: {self.rejected}"
            )
        return matching()

    async def wait_for_fetch(self, timeout: float = 10.0) -> None:  # noqa: ASYNC109
        """Wait until the bot confirmed every queued update (its next getUpdates' offset)."""
        if not await self._wait_until(lambda: not self.updates, timeout):
            raise AssertionError(f"updates not fetched within {timeout}s: {self.updates}")

    async def post_update_to(
        self, url: str, update: dict[str, Any], secret_token: str | None = None
    ) -> int:
        """POST an update to a webhook URL like Telegram would; return the HTTP status."""
        if "update_id" not in update:
            update["update_id"] = next(self._update_ids)
        if secret_token is None and self.webhook:
            secret_token = self.webhook.get("secret_token")
        headers = {"X-Telegram-Bot-Api-Secret-Token": secret_token} if secret_token else {}
        async with (
            aiohttp.ClientSession() as session,
            session.post(url, json=update, headers=headers) as response,
        ):
            return response.status

    # --- plumbing --------------------------------------------------------------------------

    def _notify(self) -> None:
        # Wake every waiter; each one re-checks its own condition.
        self._changed.set()
        self._changed = asyncio.Event()

    async def _wait_until(self, predicate: Callable[[], bool], within: float) -> bool:
        try:
            async with asyncio.timeout(within):
                while True:
                    changed = self._changed  # taken before the check so no wakeup is lost
                    if predicate():
                        return True
                    await changed.wait()
        except TimeoutError:
            return predicate()

    async def _handle(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return _json(_ApiError(401, "Unauthorized").body(), 401)
        given = request.match_info["method"]
        name, handler = self._methods.get(given.lower(), (given, None))
        params = await _read_params(request)
        self.calls.append((name, params))
        self._notify()
        try:
            if handler is None or given.lower() in self._disabled:
                raise _ApiError(404, "Not Found: method not found")
            if self.latency and name != "getUpdates":
                await asyncio.sleep(self.latency)
            await self._hold(name, params)
            if (held := self._held.get(name.lower())) is not None:
                await held.wait()
            faults = self._faults.get(name.lower())
            if faults:
                raise faults.pop(0)
            if name.lower() in self._refusals:
                raise self._refusals[name.lower()]
            result = handler(params)
            if asyncio.iscoroutine(result):
                result = await result
        except _ApiError as error:
            self.rejected.append((name, params, error.description))
            self._notify()
            return _json(error.body(), error.status)
        return _json({"ok": True, "result": result})

    def _next_message_id(self, chat_id: Any) -> int:
        return next(self._message_ids.setdefault(chat_id, itertools.count(1)))

    def _store(self, message: dict[str, Any]) -> None:
        self._messages.setdefault(message["chat"]["id"], {})[message["message_id"]] = message

    def _refuse(self, description: str) -> Exception:
        return _bad(description)

    def _check_reply_markup(self, markup: Any) -> dict[str, Any] | None:
        return check_reply_markup(markup)

    def _bot_user(self) -> dict[str, Any]:
        return {
            "id": self.bot_id, "is_bot": True, "first_name": "Memory Test Bot",
            "username": self.bot_username,
        }  # fmt: skip

    def _target_chat(self, chat_id: Any) -> dict[str, Any]:
        """Return the chat a bot method addresses, refusing upgraded groups and chats left."""
        if chat_id in self._migrated:
            raise _ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                parameters={"migrate_to_chat_id": self._migrated[chat_id]},
            )
        chat = self._chat(chat_id)
        if chat_id in self._absent:
            if chat["type"] == "private":
                raise _ApiError(403, "Forbidden: bot was blocked by the user")
            # Observed for supergroups and channels; the basic group wording is a guess.
            raise _ApiError(403, f"Forbidden: bot is not a member of the {chat['type']} chat")
        return chat

    def _thread(self, chat: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        """Check message_thread_id; return the fields a message sent into it carries."""
        thread = params.get("message_thread_id")
        if thread is None:
            return {}
        if thread not in self._topics.get(chat["id"], set()):
            raise _bad("message thread not found")
        return {"message_thread_id": thread, "is_topic_message": True}

    def _chat(self, chat_id: Any) -> dict[str, Any]:
        if chat_id in (None, ""):
            raise _bad("chat_id is empty")
        if chat_id not in self._chats:
            # An unseen chat: positive ids are users, negative ones groups.
            private = isinstance(chat_id, int) and chat_id > 0
            self._chats[chat_id] = (
                {"id": chat_id, "type": "private", "first_name": "User"}
                if private
                else {"id": chat_id, "type": "supergroup", "title": "Test chat"}
            )
        return self._chats[chat_id]

    def _new_bot_message(self, params: dict[str, Any], **fields: Any) -> dict[str, Any]:
        chat = self._target_chat(params.get("chat_id"))
        thread = self._thread(chat, params)
        message: dict[str, Any] = {
            "message_id": self._next_message_id(chat["id"]),
            "from": self._bot_user(),
            "chat": chat,
            "date": int(time.time()),
            **thread,
        }
        reply = self._replied_message(chat["id"], params)
        if reply is not None:
            message["reply_to_message"] = reply
        message.update({k: v for k, v in fields.items() if v})
        self._store(message)
        # A message from the bot replaces the draft its chat shows.
        self.shown_drafts.pop(chat["id"], None)
        return message

    def _replied_message(self, chat_id: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        reply = params.get("reply_parameters")
        if isinstance(reply, dict):
            target, lenient = reply.get("message_id"), reply.get("allow_sending_without_reply")
        else:
            target = params.get("reply_to_message_id")
            lenient = params.get("allow_sending_without_reply")
        if target is None:
            return None
        found = self._messages.get(chat_id, {}).get(target)
        if found is None and not lenient:
            raise _bad("message to be replied not found")
        return None if found is None else without_reply(found)

    # --- Bot API methods -------------------------------------------------------------------

    def _true(self, params: dict[str, Any]) -> bool:
        return True

    def _get_me(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            **self._bot_user(),
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook:
            raise _ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; use "
                "deleteWebhook to delete the webhook first",
            )
        offset = int(params.get("offset") or 0)
        if offset > 0:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        elif offset < 0:
            self.updates = self.updates[offset:]
        limit = min(max(int(params.get("limit") or 100), 1), 100)
        if isinstance(params.get("allowed_updates"), list):
            self._allowed_updates = params["allowed_updates"]
        # A newer poll terminates an older one, as on the real server.
        self._poll_generation += 1
        generation = self._poll_generation
        self._notify()

        def deliverable() -> list[dict[str, Any]]:
            return [u for u in self.updates if self._allowed(u)][:limit]

        await self._wait_until(
            lambda: self._closing or generation != self._poll_generation or bool(deliverable()),
            float(params.get("timeout") or 0),
        )
        if self._closing:
            return []
        if generation != self._poll_generation:
            raise _ApiError(
                409,
                "Conflict: terminated by other getUpdates request; make sure that only one bot "
                "instance is running",
            )
        return deliverable()

    def _allowed(self, update: dict[str, Any]) -> bool:
        kind = next((k for k in update if k != "update_id"), "")
        if self._allowed_updates:
            return kind in self._allowed_updates
        return kind not in _OPT_IN_UPDATES

    def _set_webhook(self, params: dict[str, Any]) -> bool:
        if not params.get("url"):
            return self._delete_webhook(params)
        secret = params.get("secret_token")
        if secret is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", secret):
            raise _bad("secret token contains unallowed characters")
        self.webhook = params
        if params.get("drop_pending_updates"):
            self.updates.clear()
        return True

    def _delete_webhook(self, params: dict[str, Any]) -> bool:
        self.webhook = None
        if params.get("drop_pending_updates"):
            self.updates.clear()
        return True

    def _get_webhook_info(self, params: dict[str, Any]) -> dict[str, Any]:
        info: dict[str, Any] = {
            "url": (self.webhook or {}).get("url", ""),
            "has_custom_certificate": False,
            "pending_update_count": len(self.updates),
        }
        if self.webhook and self.webhook.get("allowed_updates"):
            info["allowed_updates"] = self.webhook["allowed_updates"]
        return info

    def _send_message(self, params: dict[str, Any]) -> dict[str, Any]:
        text, entities = format_text(
            params.get("text"), params.get("parse_mode"), params.get("entities"),
            dropped=self.mangled,
        )  # fmt: skip
        markup = check_reply_markup(params.get("reply_markup"))
        message = self._new_bot_message(params, text=text, entities=entities, reply_markup=markup)
        self.sent.append({**params, "result": message})
        return message

    def _edit_message_text(self, params: dict[str, Any]) -> dict[str, Any] | bool:
        if "rich_message" in params:
            return self._edit_rich_message(params)  # telegram_rich
        text, entities = format_text(
            params.get("text"), params.get("parse_mode"), params.get("entities"),
            dropped=self.mangled,
        )  # fmt: skip
        markup = check_reply_markup(params.get("reply_markup"))
        if params.get("inline_message_id"):
            self.edits.append({**params, "result": True})
            return True
        self._target_chat(params.get("chat_id"))
        old = self._messages.get(params.get("chat_id"), {}).get(int(params.get("message_id") or 0))
        if old is None:
            raise _bad("message to edit not found")
        if old["from"]["id"] != self.bot_id:
            raise _bad("message can't be edited")
        if (old.get("text"), old.get("entities", []), old.get("reply_markup")) == (
            text, entities, markup,
        ):  # fmt: skip
            raise _bad(
                "message is not modified: specified new message content and reply markup are "
                "exactly the same as a current content and reply markup of the message"
            )
        # A rich message edited with text becomes a text message.
        dropped = ("text", "entities", "reply_markup", "rich_message")
        message = {k: v for k, v in old.items() if k not in dropped}
        message.update({k: v for k, v in (("entities", entities), ("reply_markup", markup)) if v})
        message.update(text=text, edit_date=int(time.time()))
        self._store(message)
        self.edits.append({**params, "result": message})
        return message

    def _edit_message_reply_markup(self, params: dict[str, Any]) -> dict[str, Any]:
        markup = check_reply_markup(params.get("reply_markup"))
        self._target_chat(params.get("chat_id"))
        old = self._messages.get(params.get("chat_id"), {}).get(int(params.get("message_id") or 0))
        if old is None:
            raise _bad("message to edit not found")
        if old["from"]["id"] != self.bot_id:
            raise _bad("message can't be edited")
        if old.get("reply_markup") == markup:
            raise _bad(
                "message is not modified: specified new message content and reply markup are "
                "exactly the same as a current content and reply markup of the message"
            )
        message = {k: v for k, v in old.items() if k != "reply_markup"}
        message.update({"reply_markup": markup} if markup else {}, edit_date=int(time.time()))
        self._store(message)
        self.edits.append({**params, "result": message})
        return message

    def _send_chat_action(self, params: dict[str, Any]) -> bool:
        self._thread(self._target_chat(params.get("chat_id")), params)
        if params.get("action") not in _CHAT_ACTIONS:
            raise _bad("wrong parameter action in request")
        self.chat_actions.append(params)
        return True

    def _commands_key(self, params: dict[str, Any]) -> str:
        scope = params.get("scope") or {"type": "default"}
        return json.dumps([scope, params.get("language_code") or ""], sort_keys=True)

    def _set_my_commands(self, params: dict[str, Any]) -> bool:
        commands = params.get("commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise _bad("can't parse commands JSON object")
        for command in commands:
            if not _COMMAND_RE.match(str(command.get("command", ""))):
                raise _bad("BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= 256:
                raise _bad("command description is empty or too long")
        self.commands[self._commands_key(params)] = commands
        return True

    def _get_my_commands(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        return self.commands.get(self._commands_key(params), [])

    def _delete_my_commands(self, params: dict[str, Any]) -> bool:
        self.commands.pop(self._commands_key(params), None)
        return True

    def _answer_callback_query(self, params: dict[str, Any]) -> bool:
        if not params.get("callback_query_id"):
            raise _bad("QUERY_ID_INVALID")
        if len(str(params.get("text") or "")) > 200:
            raise _bad("MESSAGE_TOO_LONG")
        self.callback_answers.append(params)
        return True

    def _send_document(self, params: dict[str, Any]) -> dict[str, Any]:
        document = params.get("document")
        if isinstance(document, dict):
            if not document["data"]:
                raise _bad("file must be non-empty")
            # Registered, so a test can fetch it back with getFile like any other file.
            doc = self.add_file(
                document["data"],
                file_name=document["filename"],
                mime_type=document["content_type"],
            )
        elif isinstance(document, str) and document in self.files.by_id:
            doc = self.files.by_id[document].fields()  # resent by file_id
        elif isinstance(document, str) and document:
            serial = len(self.documents) + 1
            doc = {"file_id": f"BQACAgIAAxkDAAI{serial:06d}", "file_unique_id": f"AgAD{serial:06d}"}
        else:
            raise _bad("there is no document in the request")
        caption = params.get("caption")
        entities: list[dict[str, Any]] = []
        if caption:
            caption, entities = format_text(
                caption, params.get("parse_mode"), params.get("caption_entities"),
                caption=True, dropped=self.mangled,
            )  # fmt: skip
        markup = check_reply_markup(params.get("reply_markup"))
        message = self._new_bot_message(
            params, document=doc, caption=caption, caption_entities=entities, reply_markup=markup
        )
        record = {**params, "result": message}
        if isinstance(document, dict):
            record.update(filename=document["filename"], data=document["data"])
        self.documents.append(record)
        return message

    def _send_message_draft(self, params: dict[str, Any]) -> bool:
        # Checked in the order the real server is reported to check: the text's markup, the
        # chat (drafts exist only in private chats), the draft id, then the length.
        text, entities = format_text(
            params.get("text"), params.get("parse_mode"), params.get("entities"),
            allow_empty=True, dropped=self.mangled,
        )  # fmt: skip
        chat = self._target_chat(params.get("chat_id"))
        if chat["type"] != "private":
            raise _bad("TEXTDRAFT_PEER_INVALID")
        draft_id = params.get("draft_id")
        if not isinstance(draft_id, int) or isinstance(draft_id, bool) or draft_id == 0:
            raise _bad("RANDOM_ID_INVALID")
        self._check_stop_params(params)
        thread = self._thread(chat, params)
        draft = {
            "chat_id": chat["id"],
            "draft_id": draft_id,
            "text": text,
            "entities": entities,
            "message_thread_id": thread.get("message_thread_id"),
            "params": params,
            "at": time.monotonic(),
        }
        self.drafts.append(draft)
        self.shown_drafts[chat["id"]] = draft
        return True

    def _get_file(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = params.get("file_id")
        if not file_id:
            raise _bad("file_id not specified")  # guessed wording
        stored = self.files.by_id.get(str(file_id))
        if stored is None:
            raise _bad("invalid file_id")
        if stored.size > MAX_DOWNLOAD_BYTES:
            raise _bad("file is too big")
        return {**stored.fields(), "file_path": stored.file_path}

    async def _download(self, request: web.Request) -> web.Response:
        """Serve a file's bytes at /file/bot<token>/<file_path>, as Telegram's file server does."""
        stored = self.files.by_path.get(urllib.parse.unquote(request.match_info["path"]))
        if request.match_info["token"] != self.token or stored is None:
            return _json(_ApiError(404, "Not Found").body(), 404)
        self.downloads.append(stored.file_id)
        self._notify()
        return web.Response(body=stored.content(), content_type="application/octet-stream")

    def _delete_message(self, params: dict[str, Any]) -> bool:
        """Delete one of the bot's own messages (all a bot without admin rights may delete)."""
        chat = self._target_chat(params.get("chat_id"))
        message_id = int(params.get("message_id") or 0)
        message = self._messages.get(chat["id"], {}).get(message_id)
        if message is None or (chat["id"], message_id) in self.deleted:
            raise _bad("message to delete not found")
        if message["from"]["id"] != self.bot_id:
            raise _bad("message can't be deleted")
        # Kept for the tests to read (message()), as the chat showed it before.
        self.deleted.append((chat["id"], message_id))
        return True

    def _leave_chat(self, params: dict[str, Any]) -> bool:
        chat = self._target_chat(params.get("chat_id"))
        if chat["type"] == "private":
            raise _bad("chat member status can't be changed in private chats")  # guessed wording
        self._absent.add(chat["id"])
        self.left_chats.append(chat["id"])
        return True


async def _read_params(request: web.Request) -> dict[str, Any]:
    """Collect parameters from the query string and a JSON, urlencoded or multipart body."""
    raw: dict[str, Any] = dict(request.query)
    uploads: dict[str, dict[str, Any]] = {}
    if request.content_type == "application/json" and request.can_read_body:
        try:
            body = await request.json()
        except ValueError:
            body = None  # Telegram ignores an unparsable body; so do we
        if isinstance(body, dict):
            raw.update(body)
    elif request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        for key, value in (await request.post()).items():
            if isinstance(value, web.FileField):
                uploads[key] = {
                    "filename": value.filename,
                    "content_type": value.content_type,
                    "data": value.file.read(),
                }
            else:
                raw[key] = value if isinstance(value, str) else bytes(value).decode()
    params = {key: _decode_param(key, value) for key, value in raw.items()}
    for key, upload in uploads.items():
        params.setdefault(key, upload)
    # Resolve attach://name references to the uploaded part.
    for key, value in params.items():
        if isinstance(value, str) and value.startswith("attach://"):
            params[key] = uploads.get(value.removeprefix("attach://"), value)
    return params


def _json(body: dict[str, Any], status: int = 200) -> web.Response:
    return web.json_response(body, status=status)
