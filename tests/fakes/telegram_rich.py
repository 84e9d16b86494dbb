"""Bot API 10.1-10.3 in FakeTelegram: Rich Messages, rich drafts, and the Stop button on drafts.

RichSide is a mixin of FakeTelegram and uses its state (drafts, shown_drafts, bot_id) and
its _target_chat, _thread, _new_bot_message, _refuse, _store, message and push_update. What
it checks is what the Bot API documents (bot/telegram/native.py cites it): InputRichMessage
takes exactly one of html, markdown or blocks; a rich message holds at most 32,768
characters of text, 500 blocks (list items and table rows each count), 16 levels and 20
table columns; drafts exist in private chats only, with a non-zero draft_id;
editMessageText takes rich_message instead of text and edits only the bot's own messages;
can_stop and keep_on_stop are Booleans, and a user can press Stop only on a draft sent with
can_stop. The error words past the limits are
not documented: these are guesses in Telegram's style ("Bad Request: RICH_MESSAGE_...", of
which RICH_MESSAGE_CONTENT_REQUIRED is seen in the wild).

Telegram parses the Markdown itself; this counts its blocks independently of the bot's code
(a paragraph's lines are one block; each heading, list item, table row and code block one).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

MAX_RICH_CHARS = 32_768
MAX_RICH_BLOCKS = 500
MAX_RICH_DEPTH = 16
MAX_RICH_COLUMNS = 20

_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+")
_SYNTAX = re.compile(r"[|#*_`>~$\\]")


def rich_blocks(markdown: str) -> tuple[list[dict[str, Any]], int, int, int]:
    """Return the blocks Telegram would make of the Markdown, its text length, depth, columns."""
    blocks: list[dict[str, Any]] = []
    depth = columns = 0
    fence: list[str] | None = None
    lines = markdown.splitlines()
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            if fence is None:
                fence = []
            else:
                blocks.append({"type": "pre", "text": "\n".join(fence)})
                fence = None
            continue
        if fence is not None:
            fence.append(line)
            continue
        if not stripped or _RULE.match(line):
            continue
        following = lines[number + 1] if number + 1 < len(lines) else ""
        if "|" in stripped and (
            _RULE.match(following) or (blocks and blocks[-1]["type"] == "table")
        ):
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            columns = max(columns, len(cells))
            if not blocks or blocks[-1]["type"] != "table" or _RULE.match(following):
                blocks.append({"type": "table", "rows": []})
            blocks[-1]["rows"].append(cells)
            continue
        if (item := _ITEM.match(line)) is not None:
            depth = max(depth, 2 + len(item.group(1)) // 2)
            blocks.append({"type": "list_item", "text": line[item.end() :]})
        elif heading := re.match(r"^(#{1,6})\s+(.*)", stripped):
            blocks.append({"type": "heading", "level": len(heading[1]), "text": heading[2]})
        elif stripped.startswith("$$"):
            blocks.append({"type": "math", "text": stripped.strip("$")})
        elif blocks and blocks[-1]["type"] == "paragraph" and lines[number - 1].strip():
            blocks[-1]["text"] += "\n" + stripped
        else:
            blocks.append({"type": "paragraph", "text": stripped})
    if fence is not None:  # an unclosed fence runs to the end, as in CommonMark
        blocks.append({"type": "pre", "text": "\n".join(fence)})
    chars = len(_SYNTAX.sub("", "\n".join(line for line in lines if not _RULE.match(line))))
    return blocks, chars, max(depth, 1), columns


class RichSide:
    """Rich messages and drafts, and a user's press of Stop on a draft."""

    drafts: list[dict[str, Any]]
    shown_drafts: dict[Any, dict[str, Any]]
    rich: list[dict[str, Any]]  # accepted sendRichMessage calls: params, blocks, result
    rich_edits: list[dict[str, Any]]  # accepted editMessageText calls with rich_message
    bot_id: int
    stops: list[dict[str, Any]]  # the stopped_message_generation updates made by presses

    if TYPE_CHECKING:

        def push_update(self, update: dict[str, Any]) -> dict[str, Any]: ...
        def _target_chat(self, chat_id: Any) -> dict[str, Any]: ...
        def _thread(self, chat: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]: ...
        def _new_bot_message(self, params: dict[str, Any], **fields: Any) -> dict[str, Any]: ...
        def _refuse(self, description: str) -> Exception: ...
        def _store(self, message: dict[str, Any]) -> None: ...
        def message(self, chat_id: Any, message_id: int) -> dict[str, Any]: ...
        def _check_reply_markup(self, markup: Any) -> dict[str, Any] | None: ...
        async def _wait_until(self, predicate: Callable[[], bool], within: float) -> bool: ...

    # --- test-side API ---------------------------------------------------------------------

    def press_stop(self, chat_id: int, *, webhook: bool = False) -> dict[str, Any]:
        """Press Stop on the draft the chat shows; queue the update (or just return it).

        Telegram shows the button only on a draft sent with can_stop, so a press elsewhere is
        a test's mistake. The draft stays if it was sent with keep_on_stop, else it goes.
        """
        draft = self.shown_drafts.get(chat_id)
        if draft is None or draft["params"].get("can_stop") is not True:
            raise AssertionError(f"chat {chat_id} shows no draft with a Stop button: {draft}")
        stopped: dict[str, Any] = {
            "chat": self._target_chat(chat_id),
            "draft_id": draft["draft_id"],
        }
        if draft["message_thread_id"] is not None:
            stopped["message_thread_id"] = draft["message_thread_id"]
        if draft["params"].get("keep_on_stop") is not True:
            self.shown_drafts.pop(chat_id, None)
        update = {"stopped_message_generation": stopped}
        self.stops.append({**stopped, "at": time.monotonic()})
        return update if webhook else self.push_update(update)

    async def wait_for_draft(
        self,
        chat_id: Any,
        words: str = "",
        timeout: float = 10.0,  # noqa: ASYNC109
    ) -> dict[str, Any]:
        """Wait until the chat shows a draft whose text holds words; return that draft."""

        def showing() -> bool:
            return words in (self.shown_drafts.get(chat_id) or {}).get("text", "\0")

        if not await self._wait_until(showing, timeout):
            raise AssertionError(f"chat {chat_id} shows no draft with {words!r} within {timeout}s")
        return self.shown_drafts[chat_id]

    def rich_to(self, chat_id: Any) -> list[list[dict[str, Any]]]:
        """Return the blocks of the rich messages sent to chat_id, in order."""
        return [r["blocks"] for r in self.rich if r["chat_id"] == chat_id]

    # --- checks ----------------------------------------------------------------------------

    def _check_stop_params(self, params: dict[str, Any]) -> None:
        """Refuse can_stop or keep_on_stop that are not Booleans."""
        for key in ("can_stop", "keep_on_stop"):
            if key in params and not isinstance(params[key], bool):
                raise self._refuse(f"can't parse {key}: Boolean expected")  # guessed wording

    def _rich_message(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Check rich_message as documented; return its blocks."""
        rich = params.get("rich_message")
        if not isinstance(rich, dict):
            raise self._refuse("rich_message is required")  # guessed wording
        sources = [key for key in ("html", "markdown", "blocks") if rich.get(key) is not None]
        if len(sources) != 1:
            raise self._refuse("RICH_MESSAGE_CONTENT_REQUIRED")
        if sources != ["markdown"]:
            raise self._refuse(f"{sources[0]} rich messages are not supported by FakeTelegram")
        blocks, chars, depth, columns = rich_blocks(str(rich["markdown"]))
        if not blocks:
            raise self._refuse("RICH_MESSAGE_CONTENT_REQUIRED")
        if chars > MAX_RICH_CHARS:
            raise self._refuse("RICH_MESSAGE_TOO_LONG")
        if sum(1 + len(b.get("rows", [])) for b in blocks) > MAX_RICH_BLOCKS:
            raise self._refuse("RICH_MESSAGE_TOO_MANY_BLOCKS")
        if depth > MAX_RICH_DEPTH:
            raise self._refuse("RICH_MESSAGE_TOO_DEEP")
        if columns > MAX_RICH_COLUMNS:
            raise self._refuse("RICH_MESSAGE_TABLE_TOO_WIDE")
        return blocks

    # --- Bot API methods -------------------------------------------------------------------

    def _send_rich_message(self, params: dict[str, Any]) -> dict[str, Any]:
        blocks = self._rich_message(params)
        markup = self._check_reply_markup(params.get("reply_markup"))
        message = self._new_bot_message(
            params, rich_message={"blocks": blocks}, reply_markup=markup
        )
        self.rich.append({**params, "blocks": blocks, "result": message})
        return message

    def _send_rich_message_draft(self, params: dict[str, Any]) -> bool:
        blocks = self._rich_message(params)
        chat = self._target_chat(params.get("chat_id"))
        if chat["type"] != "private":
            raise self._refuse("TEXTDRAFT_PEER_INVALID")
        draft_id = params.get("draft_id")
        if not isinstance(draft_id, int) or isinstance(draft_id, bool) or draft_id == 0:
            raise self._refuse("RANDOM_ID_INVALID")
        self._check_stop_params(params)
        thread = self._thread(chat, params)
        draft = {
            "chat_id": chat["id"],
            "draft_id": draft_id,
            "text": str(params["rich_message"]["markdown"]),
            "blocks": blocks,
            "message_thread_id": thread.get("message_thread_id"),
            "params": params,
            "at": time.monotonic(),
        }
        self.drafts.append(draft)
        self.shown_drafts[chat["id"]] = draft
        return True

    def _edit_rich_message(self, params: dict[str, Any]) -> dict[str, Any]:
        """Edit one of the bot's messages into a rich one (editMessageText with rich_message)."""
        if params.get("text") is not None:
            raise self._refuse("text and rich_message can't be used together")  # guessed
        blocks = self._rich_message(params)
        markup = self._check_reply_markup(params.get("reply_markup"))
        self._target_chat(params.get("chat_id"))
        try:
            old = self.message(params.get("chat_id"), int(params.get("message_id") or 0))
        except KeyError:
            raise self._refuse("message to edit not found") from None
        if old["from"]["id"] != self.bot_id:
            raise self._refuse("message can't be edited")
        if (old.get("rich_message"), old.get("reply_markup")) == ({"blocks": blocks}, markup):
            raise self._refuse(
                "message is not modified: specified new message content and reply markup are "
                "exactly the same as a current content and reply markup of the message"
            )
        dropped = ("text", "entities", "reply_markup", "rich_message")
        message = {k: v for k, v in old.items() if k not in dropped}
        message.update(rich_message={"blocks": blocks}, edit_date=int(time.time()))
        if markup:
            message["reply_markup"] = markup
        self._store(message)
        self.rich_edits.append({**params, "blocks": blocks, "result": message})
        return message
