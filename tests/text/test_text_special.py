"""Special tokens: plain text unless allowed, registration rules, decoding."""

import pytest

from netcl_lite.text import BPETokenizer
from netcl_lite.text.special import split_on_specials


@pytest.fixture
def tok():
    tok = BPETokenizer()
    tok.train_from_iterator(["hello hello world world"], vocab_size=270)
    tok.register_special_tokens({"<|endoftext|>": 1000, "<|pad|>": 1001})
    return tok


def test_special_strings_are_plain_text_unless_allowed(tok):
    text = "hi<|endoftext|>there"
    plain = tok.encode(text)
    assert plain == tok.encode_ordinary(text)
    assert 1000 not in plain and 1001 not in plain
    assert tok.decode(plain) == text


def test_allowed_specials_become_their_ids(tok):
    text = "hi<|endoftext|>there<|pad|>"
    assert tok.encode(text, allowed_special="all") == (
        tok.encode_ordinary("hi") + [1000] + tok.encode_ordinary("there") + [1001]
    )
    only_eot = tok.encode(text, allowed_special={"<|endoftext|>"})
    assert 1000 in only_eot and 1001 not in only_eot
    assert tok.decode(only_eot) == text
    assert tok.encode("<|pad|><|pad|>", allowed_special="all") == [1001, 1001]


def test_allowed_special_must_be_registered(tok):
    with pytest.raises(ValueError, match="<|nope|>"):
        tok.encode("x", allowed_special={"<|nope|>"})
    with pytest.raises(ValueError, match='"all" or a set'):
        tok.encode("x", allowed_special="<|pad|>")


def test_special_tokens_property_and_vocab_size(tok):
    assert tok.special_tokens == {"<|endoftext|>": 1000, "<|pad|>": 1001}
    tok.special_tokens["<|x|>"] = 5  # a copy: does not change the tokenizer
    assert "<|x|>" not in tok.special_tokens
    assert tok.vocab_size == 1002
    assert tok.decode([1000, 1001]) == "<|endoftext|><|pad|>"


def test_registration_rules(tok):
    with pytest.raises(ValueError, match="regular token"):
        tok.register_special_tokens({"<|a|>": 100})
    with pytest.raises(ValueError, match="clashes"):
        tok.register_special_tokens({"<|a|>": 1000})
    with pytest.raises(ValueError, match="clashes"):
        tok.register_special_tokens({"<|pad|>": 1005})
    with pytest.raises(ValueError, match="non-empty str"):
        tok.register_special_tokens({"": 2000})
    with pytest.raises(ValueError, match="bad id"):
        tok.register_special_tokens({"<|b|>": -3})
    tok.register_special_tokens({"<|pad|>": 1001})  # the same again is fine
    assert len(tok.special_tokens) == 2


def test_split_prefers_the_longest_special():
    assert split_on_specials("a<|x|>yb", {"<|x|>", "<|x|>y"}) == ["a", "<|x|>y", "b"]
    assert split_on_specials("abc", set()) == ["abc"]
