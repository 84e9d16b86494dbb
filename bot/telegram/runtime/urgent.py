"""Updates that never wait in their chat's lane behind a turn in progress.

`/new` and `/memory off` must take effect at once, even while a reply is being written (that
reply still arrives, from the conversation it began in). A stranger's button press is
answered by the guard without any work for the chat, so it must not queue in the chat's lane
either: a flood of presses would delay the members' replies. The same holds for anything a
stranger sends the bot in private: the guard refuses it, so it takes neither the lane nor the
chat's lease in the database (a stranger's flood costs no writes). A press of a group's Stop
must reach the answer it stops at once, while that answer holds the lane.
"""

from telegram import Message, Update
from telegram.constants import ChatType

from bot.telegram.chat.group_stop import PREFIX as STOP_PREFIX

# Command and first argument (lowercase) of the commands that skip the lane.
URGENT_COMMANDS = frozenset({("/new", None), ("/memory", "off")})


def is_urgent_command(message: Message | None) -> bool:
    """Tell whether a message is /new or /memory off (also as /new@somebot)."""
    if message is None or not message.text or not message.text.startswith("/"):
        return False
    words = message.text.split()
    command = words[0].partition("@")[0].lower()
    argument = words[1].lower() if len(words) > 1 else None
    return (command, argument) in URGENT_COMMANDS


def outside_lane(update: object, allowed_user_ids: frozenset[int]) -> bool:
    """Tell whether an update runs outside its chat's lane: urgent, or a stranger's."""
    if not isinstance(update, Update):
        return False
    if query := update.callback_query:
        # A group's Stop must reach the answer it stops, which holds the lane meanwhile.
        stop = (query.data or "").startswith(STOP_PREFIX)
        return stop or query.from_user.id not in allowed_user_ids
    chat, user = update.effective_chat, update.effective_user
    if chat is not None and chat.type == ChatType.PRIVATE:
        if user is None or user.id not in allowed_user_ids:
            return True
    return is_urgent_command(update.message)
