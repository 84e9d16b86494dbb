"""Token counting works offline from the shipped encoding."""

from memory.tokens import count_tokens, encoding


def test_matches_cl100k_base_token_ids():
    assert encoding().encode("hello world") == [15339, 1917]
    assert encoding().n_vocab == 100277


def test_counts_special_token_text_as_plain_text():
    assert count_tokens("<|endoftext|>") > 1
    assert count_tokens("") == 0
