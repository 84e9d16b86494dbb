"""Which messages are meant for the bot: all in private, only addressed ones in groups."""

from telegram import Message, MessageEntity
from telegram.constants import ChatType
from telegram.ext.filters import MessageFilter, UpdateType


def is_addressed_to_bot(message: Message, bot_id: int, bot_username: str | None) -> bool:
    """Tell whether a message is for the bot: private, a mention, a reply to it, or a command."""
    if message.chat.type == ChatType.PRIVATE:
        return True
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == bot_id:
        return True
    handle = f"@{bot_username}".casefold() if bot_username else None
    # A photo's or document's mention is in its caption's entities.
    entities = {**message.parse_entities(), **message.parse_caption_entities()}
    for entity, value in entities.items():
        if entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0:
            command_target = value.partition("@")[2]
            if not command_target or (
                bot_username and command_target.casefold() == bot_username.casefold()
            ):
                return True
        if entity.type == MessageEntity.MENTION and handle and value.casefold() == handle:
            return True
        if entity.type == MessageEntity.TEXT_MENTION and entity.user and entity.user.id == bot_id:
            return True
    return False


class AddressedToBot(MessageFilter):
    """Pass messages the bot should answer; in groups, only those addressed to it."""

    def filter(self, message: Message) -> bool:
        """Check the message against the bot's own id and username."""
        bot = message.get_bot()
        return is_addressed_to_bot(message, bot.id, bot.username)


ADDRESSED_TO_BOT = AddressedToBot(name="ADDRESSED_TO_BOT")

# Commands and chat answer new messages only: an edit or a channel post is not a request.
NEW_MESSAGES = UpdateType.MESSAGE
