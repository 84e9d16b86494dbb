"""The one secret detector every memory write asks: saves, updates, proposals, imports, tidy.

A secret is a value that unlocks something: a password or PIN given with its value, an API
key or token, a private key, a card or bank account number. Where a secret is kept is not
one ("the Wi-Fi password is on the router", "my password manager is 1Password").
"""

import re

# Words naming a secret field, each with how a refusal names it.
_FIELDS = {
    "password": "a password",
    "passwort": "a password",
    "kennwort": "a password",
    "passcode": "a passcode",
    "passphrase": "a passphrase",
    "contraseña": "a password",
    "senha": "a password",
    "pin": "a PIN",
    "puk": "a PUK",
    "cvv": "a card security code",
    "cvc": "a card security code",
    "otp": "a one-time code",
    "token": "a token",
    "secret": "a secret",
    "apikey": "an API key",
}
# Everyday words too ("a token of thanks", "the secret is out"): a secret only with digits.
_WEAK_FIELDS = frozenset({"token", "secret"})
# Two-word fields, matched as one.
_PHRASES = re.compile(
    r"\b(?:api|access|secret|private)[ _-]?(key|token)\b|\b(?:one[ -]time|security|recovery|"
    r"backup|2fa|verification|access|door|alarm)[ -]code\b|\bmot de passe\b|\bseed phrase\b",
    re.IGNORECASE,
)
# A field followed by one of these is about the field, not its value: "password manager".
_NOT_A_VALUE = frozenset(
    """
    manager managers hint hints reset resets policy policies rules rule requirement
    requirements protected protection change changes changed field vault safe app length
    strength expiry expired holder
    """.split()
)
# After "is" or ":", these say where or how the secret is kept, not what it is.
_POINTERS = frozenset(
    """
    on in at under inside behind beside near next by with within kept stored saved written
    taped printed noted listed shared managed handled known set changed reset expired sent
    the a an my his her their our your its somewhere same different not never only also
    still now from of for to
    """.split()
)
_CONNECTORS = frozenset("is was are were ist est es : = - \u2013 \u2014".split())
_TOKEN = re.compile("[^\\s:=,;()\"'\u2018\u2019\u201c\u201d]+|[:=]")
# Values that are secrets wherever they appear.
_SHAPES = (
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"), "a private key"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), "an API key"),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,})"), "an access token"),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), "an access token"),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "an API key"),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), "an API key"),
    (re.compile(r"\b\d{6,12}:[A-Za-z0-9_-]{30,}"), "a bot token"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}"), "an access token"),
    (re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,}"), "a bank account number"),
)
_KEY_LIKE = re.compile(r"[A-Za-z0-9_-]{24,}")
_CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")


def _luhn(digits: str) -> bool:
    """Tell whether digits pass the check every payment card number passes."""
    total = 0
    for position, digit in enumerate(reversed(digits)):
        value = int(digit) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _key_like(word: str) -> bool:
    """Tell whether a long run of characters mixes cases and digits like a generated key."""
    return (
        any(c.isdigit() for c in word)
        and any(c.islower() for c in word)
        and any(c.isupper() for c in word)
    )


def _field_value(text: str) -> str | None:
    """Return what a secret field given with its value is ("a PIN"), or None."""
    normalised = _PHRASES.sub(lambda m: " apikey " if m.group(1) else " passcode ", text)
    words = _TOKEN.findall(normalised)
    for index, word in enumerate(words):
        name = word.casefold().rstrip(".!?")
        field = _FIELDS.get(name)
        if field is None:
            continue
        rest = [w.casefold() for w in words[index + 1 : index + 4]]
        while rest and rest[0] in ("code", "number", "no", "no.", "nr"):
            rest = rest[1:]
        if not rest or rest[0] in _NOT_A_VALUE:
            continue
        value = rest[1] if rest[0] in _CONNECTORS and len(rest) > 1 else rest[0]
        if rest[0] in _CONNECTORS and value not in _POINTERS and name not in _WEAK_FIELDS:
            return field
        if any(c.isdigit() for c in value):
            return field
    return None


def secret_in(*texts: str | None) -> str | None:
    """Return what secret the texts hold ("a password", "an API key"), or None if none."""
    for text in texts:
        if not text:
            continue
        for shape, what in _SHAPES:
            if shape.search(text):
                return what
        if any(_key_like(run) for run in _KEY_LIKE.findall(text)):
            return "an API key"
        for card in _CARD.finditer(text):
            if _luhn(re.sub(r"\D", "", card.group())):
                return "a card number"
        if (field := _field_value(text)) is not None:
            return field
    return None
