"""Short random memory ids."""

import re
import secrets
import string

ALPHABET = string.ascii_letters + string.digits
ID_LENGTH = 8
# A memory id as a regular expression fragment, for patterns that embed one.
ID_REGEX = rf"[A-Za-z0-9]{{{ID_LENGTH}}}"
ID_PATTERN = re.compile(rf"^{ID_REGEX}$")


def new_memory_id() -> str:
    """Return a fresh 8-character id from a cryptographic source."""
    return "".join(secrets.choice(ALPHABET) for _ in range(ID_LENGTH))


def is_memory_id(text: str) -> bool:
    """Tell whether text has the shape of a memory id."""
    return bool(ID_PATTERN.match(text))
