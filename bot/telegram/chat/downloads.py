"""Fetch the files users sent by their Telegram file id: getFile, then the download."""

from telegram import Bot
from telegram.error import BadRequest, TelegramError

from bot.media.attachments import FileTooBig, FileUnavailable

# Telegram lets bots download files of at most 20 MB (getFile refuses bigger ones).
MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024
# A 20 MB download takes longer than PTB's default five seconds on a slow link.
DOWNLOAD_TIMEOUT_SECONDS = 120


class TelegramFiles:
    """The FileSource of files sent to the bot: a Telegram file id stays valid for the bot."""

    max_bytes = MAX_DOWNLOAD_BYTES

    def __init__(self, bot: Bot):
        self._bot = bot

    async def fetch(self, file_id: str) -> bytes:
        """Download a file; raise FileTooBig over Telegram's limit, else FileUnavailable."""
        try:
            file = await self._bot.get_file(file_id)
            _check_path(file.file_path, self._bot.base_file_url)
            if file.file_size is not None and file.file_size > self.max_bytes:
                raise FileTooBig(f"{file.file_size} bytes")
            data = await file.download_as_bytearray(read_timeout=DOWNLOAD_TIMEOUT_SECONDS)
        except BadRequest as error:
            if "too big" in str(error).lower():
                raise FileTooBig(str(error)) from None
            raise FileUnavailable(str(error)) from None
        except TelegramError as error:  # network trouble, timeouts, Telegram refusing
            raise FileUnavailable(str(error)) from None
        return bytes(data)


def _check_path(path: str | None, base_url: str) -> None:
    """Refuse a file path that is not a download from the Bot API's file server.

    PTB reads an absolute path from the local disk, without the size check: a Bot API server
    that answered with one (or with '..' in it) would hand over another owner's cached file.
    """
    if not path or not path.startswith(base_url + "/") or ".." in path.split("/"):
        raise FileUnavailable("Telegram gave a file path outside its file server")
