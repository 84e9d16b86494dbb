"""Token counting with tiktoken's cl100k_base, loaded from the copy shipped here."""

import binascii
import functools
import gzip
import hashlib
from importlib import resources

import tiktoken
from tiktoken_ext.openai_public import (
    ENDOFPROMPT,
    ENDOFTEXT,
    FIM_MIDDLE,
    FIM_PREFIX,
    FIM_SUFFIX,
)

ENCODING_FILE = "cl100k_base.tiktoken.gz"
# The hash tiktoken itself expects for the decompressed cl100k_base ranks.
ENCODING_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# Copied from tiktoken_ext.openai_public.cl100k_base, which would download the ranks.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL_TOKENS = {
    ENDOFTEXT: 100257,
    FIM_PREFIX: 100258,
    FIM_MIDDLE: 100259,
    FIM_SUFFIX: 100260,
    ENDOFPROMPT: 100276,
}


def _load_ranks() -> dict[bytes, int]:
    """Read the shipped BPE ranks, refusing a corrupted file."""
    packed = resources.files("memory").joinpath("data", ENCODING_FILE).read_bytes()
    contents = gzip.decompress(packed)
    if hashlib.sha256(contents).hexdigest() != ENCODING_SHA256:
        raise RuntimeError(f"{ENCODING_FILE} is corrupted (sha256 mismatch)")
    # Each line is a token in base64 and its rank (the hash vouches for the layout). Decoded
    # without base64's checks, which cost a third of start-up's tokenizer build.
    return {
        binascii.a2b_base64(token): int(rank)
        for token, rank in map(bytes.split, contents.splitlines())
    }


@functools.cache
def encoding() -> tiktoken.Encoding:
    """Return the cl100k_base encoding, built without network access."""
    built = tiktoken.Encoding(
        name="cl100k_base",
        pat_str=CL100K_PATTERN,
        mergeable_ranks=_load_ranks(),
        special_tokens=CL100K_SPECIAL_TOKENS,
    )
    # The Rust core holds its own copy of the ranks; tiktoken keeps this one only to pickle
    # the encoding, which we never do, and 100,256 entries cost about 15 MiB for the process's
    # life. An unpickled copy would fail to build (no ranks), never count differently.
    built._mergeable_ranks = {}
    return built


def count_tokens(text: str) -> int:
    """Count the tokens of text, treating special-token text as plain text."""
    return len(encoding().encode(text, disallowed_special=()))
