"""Token counting works offline from the shipped encoding."""

import gzip
from importlib import resources

from tiktoken.load import load_tiktoken_bpe

from memory.tokens import ENCODING_FILE, ENCODING_SHA256, _load_ranks, count_tokens, encoding


def test_matches_cl100k_base_token_ids():
    assert encoding().encode("hello world") == [15339, 1917]
    assert encoding().n_vocab == 100277


def test_counts_special_token_text_as_plain_text():
    assert count_tokens("<|endoftext|>") > 1
    assert count_tokens("") == 0


def test_reads_the_shipped_ranks_as_tiktoken_does(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read the file given, cache nothing
    plain = tmp_path / "cl100k_base.tiktoken"
    packed = resources.files("memory").joinpath("data", ENCODING_FILE).read_bytes()
    plain.write_bytes(gzip.decompress(packed))
    assert _load_ranks() == load_tiktoken_bpe(str(plain), expected_hash=ENCODING_SHA256)
