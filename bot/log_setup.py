"""Logging that never prints the bot token or the API key."""

import logging
from collections.abc import Iterable

REDACTED = "[REDACTED]"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
OWN_LOGGERS = ("bot", "memory", "evals", "__main__")


class RedactingFormatter(logging.Formatter):
    """Format records, then blank out every secret, including in tracebacks."""

    def __init__(self, fmt: str, secrets: Iterable[str]):
        super().__init__(fmt)
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        """Return the formatted record with secrets replaced."""
        text = super().format(record)
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text


def configure_logging(level: str, secrets: Iterable[str]) -> None:
    """Log to stderr at level through the redacting formatter."""
    handler = logging.StreamHandler()
    handler.setFormatter(RedactingFormatter(LOG_FORMAT, secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    # At DEBUG the libraries (the SDKs, the database drivers) would write whole conversations
    # and files' base64 to the log: DEBUG is for the bot's own loggers, libraries stay at INFO.
    root.setLevel(max(logging.INFO, logging.getLevelName(level)))
    for ours in OWN_LOGGERS:
        logging.getLogger(ours).setLevel(level)
    # Every Bot API request URL contains the token; these lines add nothing at INFO.
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))
    # pypdf warns about damaged files in words that quote them: users' files stay out of logs.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
