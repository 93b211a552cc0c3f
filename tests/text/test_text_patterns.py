"""The ASCII twins of the split patterns cut ASCII text exactly like the
originals: every character, every short string over the characters that
matter, random text, and all of Shakespeare."""

import itertools
import re

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from netcl_lite.text.patterns import (
    ASCII_TWINS,
    GPT2_SPLIT_PATTERN,
    GPT4_SPLIT_PATTERN,
)

PATTERNS = {"gpt2": GPT2_SPLIT_PATTERN, "gpt4": GPT4_SPLIT_PATTERN}
ASCII = "".join(map(chr, range(128)))
# one or two of each kind: letters that start contractions, other letters,
# digits, the quote, punctuation, each whitespace, and non-whitespace controls
EDGES = "sSlLtdvreXz09'!_ \t\n\r\x0b\x0c\x1c\x00\x7f"


def pair(pattern):
    """(regex's findall, the ASCII twin's findall) for one pattern."""
    return (regex.compile(pattern).findall,
            re.compile(ASCII_TWINS[pattern], re.ASCII).findall)


@pytest.mark.parametrize("name", PATTERNS)
def test_every_pair_of_ascii_characters(name):
    original, twin = pair(PATTERNS[name])
    for a, b in itertools.product(ASCII, repeat=2):
        assert twin(a + b) == original(a + b), repr(a + b)


@pytest.mark.parametrize("name", PATTERNS)
def test_every_short_string_of_edge_characters(name):
    original, twin = pair(PATTERNS[name])
    for n in range(1, 5):
        for chars in itertools.product(EDGES, repeat=n):
            text = "".join(chars)
            assert twin(text) == original(text), repr(text)


@pytest.mark.parametrize("name", PATTERNS)
@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(EDGES + "aeiouy123 .,;"),
                    max_size=60))
def test_random_ascii_text(name, text):
    original, twin = pair(PATTERNS[name])
    assert twin(text) == original(text)


@pytest.mark.parametrize("name", PATTERNS)
def test_all_of_shakespeare(name, shakespeare):
    assert shakespeare.isascii()
    original, twin = pair(PATTERNS[name])
    assert twin(shakespeare) == original(shakespeare)
