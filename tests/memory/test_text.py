"""Text fit to store, and text cut to fit."""

import pytest

from memory.text import clean_text, shorten, storable


def test_shorten_keeps_what_fits_and_marks_a_cut_without_trailing_space():
    assert shorten("green tea", 9) == "green tea"
    assert shorten("green tea", 8) == "green t…"
    assert shorten("green tea", 7) == "green…"  # "green " less its space, then the mark
    assert len(shorten("x" * 500, 100)) == 100


def test_clean_text_drops_control_characters_and_storable_refuses_them():
    assert clean_text("a\r\nb\rc\x00d\te") == "a\nb\ncd\te"
    assert storable("a\nb\te") == "a\nb\te"
    with pytest.raises(ValueError, match="plain text"):
        storable("a\x00b")
