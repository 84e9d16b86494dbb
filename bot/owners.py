"""Whose memory an update uses."""

from telegram import Update


def owner_id(update: Update) -> int:
    """Return the memory owner: the user in a private chat, the group in a group."""
    # In a private chat the chat id is the user's id.
    return update.effective_chat.id
