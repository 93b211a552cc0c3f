"""Splitter(pattern) cuts exactly like regex.findall(pattern): on every
character below U+10000, on mixed text at every stretch length (with
letters beyond U+10000, which go to `regex`), and on Shakespeare with
Unicode mixed in."""

import pickle
import random

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from netcl_lite.text import split as split_module
from netcl_lite.text.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN
from netcl_lite.text.split import Splitter

PATTERNS = {"gpt2": GPT2_SPLIT_PATTERN, "gpt4": GPT4_SPLIT_PATTERN}
ASCII_EDGES = list("sStdlvreXz09'!._ \t\n\r\x0b\x0c\x1c")
# letters, digits, marks, Unicode spaces (\u00a0, \u2003, \u3000, \x85 are
# whitespace to `regex`), joiners, curly quotes, dashes, CJK, emoji, the long
# s and the Kelvin sign (which `re` and `regex` fold to s and k), and beyond
# U+10000 a letter, a CJK letter, a digit and a number that is no digit
UNICODE = list("é中١\u0301\u00a0\u2003\u3000\x85\u200b\u200d’—…🙂²ſ\u212a"
               "𝐀𠀀𝟎𐍈")


@pytest.mark.parametrize("name", PATTERNS)
@pytest.mark.parametrize("stretch", [0, 1, 5, 1000])
@settings(max_examples=150, deadline=None)
@given(text=st.lists(st.sampled_from(ASCII_EDGES * 4 + UNICODE), max_size=60)
       .map("".join))
def test_mixed_text_splits_like_regex(name, stretch, text):
    pattern = PATTERNS[name]
    original, split_module._STRETCH = split_module._STRETCH, stretch
    try:
        assert Splitter(pattern)(text) == regex.findall(pattern, text)
    finally:
        split_module._STRETCH = original


@pytest.mark.parametrize("name", PATTERNS)
def test_every_character_below_u10000_in_a_few_places(name):
    # each character alone, doubled, after a space, a letter, a digit and a
    # quote, and before a newline: where the twin's classes decide
    pattern = PATTERNS[name]
    split, slow = Splitter(pattern), regex.compile(pattern).findall
    for code in [*range(0xD800), *range(0xE000, 0x10000)]:
        c = chr(code)
        text = f"{c} {c}{c}a{c}1{c}'{c}\n"
        assert split(text) == slow(text), (hex(code), text)


@pytest.mark.parametrize("name", PATTERNS)
def test_shakespeare_with_unicode_mixed_in(name, shakespeare):
    rng = random.Random(0)
    text = list(shakespeare[:300_000])
    for _ in range(100):  # non-ASCII at 100 random places, some next to spaces
        text[rng.randrange(len(text))] = rng.choice(UNICODE)
    text = "".join(text)
    pattern = PATTERNS[name]
    assert Splitter(pattern)(text) == regex.findall(pattern, text)


def test_a_custom_pattern_uses_regex_alone():
    split = Splitter(r"\p{L}+|\s+|.")
    assert split("héllo wörld!") == ["héllo", " ", "wörld", "!"]
    assert Splitter(r"\d+|\D")("a12") == ["a", "12"]


def test_empty_text():
    assert Splitter(GPT2_SPLIT_PATTERN)("") == []


def test_a_tokenizer_with_a_splitter_pickles(shakespeare_tok):
    # multiprocessing pickles what it sends to workers
    copy = pickle.loads(pickle.dumps(shakespeare_tok))
    text = "To be, or not to be: that is the question. Naïve café!"
    assert copy.encode(text) == shakespeare_tok.encode(text)
    split = pickle.loads(pickle.dumps(Splitter(GPT2_SPLIT_PATTERN)))
    assert split(text) == regex.findall(GPT2_SPLIT_PATTERN, text)
