"""How many tokens the fake Messages API says a text is: its own rule, not the bot's.

Claude's tokenizer is not published; Anthropic's docs say a token is about 3.5 English
characters, and that Claude's tokenizer yields more tokens than others for the same text. The
fake counts from first principles, as a byte-pair tokenizer roughly does: a word of ASCII
letters with its leading space is one token per 6 letters begun; digits go in pairs; every
other character that is not white space is a token of its own (a letter of another script,
a punctuation mark); a run of white space is one token. That is about a tenth more than
cl100k_base (the bot's estimate) for English prose, and more for code and other scripts:
the two never agree by construction, so a bot that took its estimate for the API's count
would fail a test.
"""

import functools
import math
import re

LETTERS_PER_TOKEN = 6
DIGITS_PER_TOKEN = 2
_PIECE = re.compile(r" ?[A-Za-z]+| ?[0-9]+|\s+|\S")


@functools.lru_cache(maxsize=65536)
def text_tokens(text: str) -> int:
    """Return the tokens the fake API counts for a text (cached: histories are re-sent)."""
    tokens = 0
    for match in _PIECE.finditer(text):
        piece = match.group()
        word = piece.lstrip(" ")
        if word.isascii() and word.isalpha():
            tokens += math.ceil(len(word) / LETTERS_PER_TOKEN)
        elif word.isascii() and word.isdigit():
            tokens += math.ceil(len(word) / DIGITS_PER_TOKEN)
        else:
            tokens += 1  # one white-space run, or one other character
    return tokens
