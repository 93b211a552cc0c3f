"""GPT-2 and cl100k_base: ids identical to tiktoken's on 1.1 MB of real text."""

import base64
import unicodedata

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from netcl_lite.text import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, BPETokenizer
from netcl_lite.text import tokenizer as tokenizer_module
from netcl_lite.text.pretrained import bytes_to_unicode, merges_from_ranks
from netcl_lite.text.split import Splitter

SAMPLES = [
    "Hello world! It's 2024; we'll see   what\tthey've   done.\n\n",
    "naïve café — 👨‍👩‍👧 🇫🇷 中文分词 ١٢٣ e\u0301\r\n\u00a0\u200b",
    "    def f(x):\n        return x ** 2  # indentation\n",
    "http://example.com/a?b=c&d=e 1234567890 3.14 $$$$ !!!???",
]


@pytest.fixture(params=["gpt2", "cl100k"])
def pair(request):
    """(our tokenizer, tiktoken's) for each pretrained vocabulary."""
    return request.getfixturevalue(request.param)


def test_ids_equal_tiktoken_on_all_of_tinyshakespeare(pair, shakespeare):
    ours, reference = pair
    assert len(shakespeare.encode("utf-8")) > 1_000_000
    ids = ours.encode(shakespeare)
    assert ids == reference.encode_ordinary(shakespeare)
    assert ours.decode(ids) == shakespeare


@pytest.mark.parametrize("text", SAMPLES)
def test_ids_equal_tiktoken_on_samples(pair, text):
    ours, reference = pair
    assert ours.encode(text) == reference.encode_ordinary(text)
    assert ours.decode(reference.encode(text)) == reference.decode(ours.encode(text))


# Assigned characters only (Python's own Unicode database): `regex` follows the
# newest Unicode release, so it already calls letters some code points (e.g.
# U+3D000) that tiktoken's older tables, and Python's, leave unassigned. Such a
# character splits differently, so ids can differ there; see pretrained.py.
@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs", "Cn")),
               max_size=80))
def test_ids_equal_tiktoken_on_arbitrary_text(gpt2, cl100k, text):
    for ours, reference in (gpt2, cl100k):
        assert ours.encode(text) == reference.encode_ordinary(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_ids_equal_tiktoken_on_arbitrary_ascii_text(gpt2, cl100k, text):
    # every ASCII character, through the twin of the split (split.py)
    for ours, reference in (gpt2, cl100k):
        assert ours.encode(text) == reference.encode_ordinary(text)


def test_both_split_paths_agree_on_shakespeare(gpt2, shakespeare):
    # one non-ASCII character sends the whole text down the `regex` path
    ours, reference = gpt2
    text = shakespeare[:200_000]
    assert text.isascii()
    unicode_ids = ours.encode(text + "\u00e9")
    assert unicode_ids == reference.encode_ordinary(text + "\u00e9")
    assert ours.encode(text) == unicode_ids[:-1]


def test_a_full_chunk_cache_starts_over_and_keeps_whole_tokens(
        gpt2_files, shakespeare, monkeypatch):
    monkeypatch.setattr(tokenizer_module, "_CACHE_SIZE", 100)
    ours = BPETokenizer.from_gpt2(*gpt2_files)
    whole = len(ours._cache)
    assert whole == len(ours._whole_tokens) > 49_000  # seeded with whole tokens
    text = shakespeare[:100_000]
    ids = ours.encode(text)
    assert whole <= len(ours._cache) <= whole + 100
    assert ids == ours.encode(text) == BPETokenizer.from_gpt2(*gpt2_files).encode(text)


@pytest.mark.parametrize("pattern, left, right", [
    (GPT4_SPLIT_PATTERN, ":", ""),  # a symbol leads a letter in GPT-4
    (GPT2_SPLIT_PATTERN, " ", ""),  # a space leads a letter, digit or symbol
    (GPT2_SPLIT_PATTERN, "", "a"),  # letter runs
    (GPT2_SPLIT_PATTERN, "", "1"),  # digit runs
    (GPT2_SPLIT_PATTERN, "", " x"),  # whitespace
])
def test_every_assigned_character_splits_like_tiktoken(pattern, left, right):
    # For each character c, a toy vocabulary holds left + c + right as one
    # token: tiktoken returns that token iff its split keeps them together.
    chars = [chr(c) for c in range(0x110000)
             if unicodedata.category(chr(c)) not in ("Cn", "Cs")]
    ranks = {bytes([b]): b for b in range(256)}
    for c in chars:
        word = (left + c + right).encode("utf-8")
        for k in range(2, len(word) + 1):  # every prefix, so BPE can build it
            ranks.setdefault(word[:k], len(ranks))
    reference = tiktoken.Encoding(name="probe", pat_str=pattern,
                                  mergeable_ranks=ranks, special_tokens={})
    split = Splitter(pattern)
    differ = []
    for c in chars:
        text = left + c + right
        ours = split(text) == [text]
        theirs = reference.encode_ordinary(text) == [ranks[text.encode("utf-8")]]
        if ours != theirs:
            differ.append(f"U+{ord(c):04X}")
    assert not differ, f"{len(differ)} characters split unlike tiktoken: {differ[:10]}"


def test_special_tokens_match_tiktoken(pair):
    ours, reference = pair
    text = "a<|endoftext|>b <|endoftext|>"
    assert ours.encode(text, allowed_special="all") == reference.encode(
        text, allowed_special="all")
    assert ours.encode(text) == reference.encode_ordinary(text)  # plain text
    assert ours.vocab_size == reference.n_vocab


def test_every_token_has_tiktokens_bytes(pair):
    ours, reference = pair
    n = 256 + len(ours.merges)  # regular tokens: bytes, then one per merge
    for i in range(n):
        assert ours.decode_bytes([i]) == reference.decode_single_token_bytes(i), i


def test_bytes_to_unicode_is_a_printable_bijection():
    table = bytes_to_unicode()
    assert sorted(table) == list(range(256))
    assert len(set(table.values())) == 256
    assert all(c.isprintable() and not c.isspace() for c in table.values())


def test_gpt2_has_the_endoftext_token(gpt2):
    ours, _ = gpt2
    assert ours.special_tokens == {"<|endoftext|>": 50256}
    assert len(ours.merges) == 50_000


def test_rank_file_errors(tmp_path):
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("IQ== 0\nnot-base64!! 1\n")
    with pytest.raises(ValueError, match="line 2: expected 'base64 rank'"):
        BPETokenizer.from_tiktoken(bad)
    gaps = tmp_path / "gaps.tiktoken"
    lines = [f"{base64.b64encode(bytes([b])).decode()} {b + (b > 100)}"
             for b in range(256)]
    gaps.write_text("\n".join(lines))
    with pytest.raises(ValueError, match="without gaps"):
        BPETokenizer.from_tiktoken(gaps)


def test_merges_from_ranks_needs_two_lower_ranked_parts():
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"abc"] = 256  # neither "ab" nor "bc" exists
    with pytest.raises(ValueError, match="not a merge of two"):
        merges_from_ranks(ranks)
