"""The one secret detector: values that unlock something are secrets, where they are kept is not."""

import pytest

from memory.secret_text import secret_in

SECRETS = {
    "The user's bank PIN is 4821": "a PIN",
    "my bank PIN is 4821": "a PIN",
    "password: hunter2": "a password",
    "The user's wifi password is hunter2": "a password",
    "The office Wi-Fi password is swordfish": "a password",
    "The user's API key is sk-ant-api03-AbCdEf1234567890xyz": "an API key",
    "Deploy key AKIAIOSFODNN7EXAMPLE for the bucket": "an API key",
    "GitHub token ghp_abcdefghijklmnopqrstuvwxyz0123456789": "an access token",
    "The user's card is 4111 1111 1111 1111": "a card number",
    "The user's IBAN is DE89 3704 0044 0532 0130 00": "a bank account number",
    "The alarm code is 1234": "a passcode",
    "Their one-time code: 339901": "a passcode",
    "The staging key is q8Zr2LmX0pVt7NwYb4KcJh1s": "an API key",
    "Passwort ist Sommer2024": "a password",
}
POINTERS = [
    "The Wi-Fi password is on the router",
    "The user's password manager is 1Password",
    "The user keeps every password in Bitwarden",
    "The bank PIN is in the drawer at home",
    "The Wi-Fi password is written on the fridge",
    "The user changed their email password yesterday",
    "Ann gave Bob a token of thanks",
    "The surprise party for Carol is a secret",
    "The user's phone number is +49 170 1234567",
    "The user was born on 1990-04-12 and lives at Hauptstraße 12",
    "Project id 123e4567-e89b-12d3-a456-426614174000",
    "The user's password policy is 12 characters minimum",
]


@pytest.mark.parametrize(("text", "what"), SECRETS.items())
def test_a_secret_value_is_found_and_named(text, what):
    assert secret_in(text) == what


@pytest.mark.parametrize("text", POINTERS)
def test_where_a_secret_is_kept_is_no_secret(text):
    assert secret_in(text) is None


def test_the_subject_is_checked_too():
    assert secret_in("The user's router", "PIN 4821") == "a PIN"
    assert secret_in("The user's router", None) is None
