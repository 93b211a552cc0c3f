"""BPE training: the known answer, and both trainers against a reference kept here.

`reference_train` is deliberately written apart from netcl_lite.text.naive so
that a shared bug cannot hide: it recounts every pair with a Counter after
every merge and picks the winner with an explicit tie rule.
"""

import collections

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_ref import reference_merge
from netcl_lite.text import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, BPETokenizer
from netcl_lite.text.naive import get_stats, merge, train_naive
from netcl_lite.text.train import count_chunks, train_bpe


def reference_train(texts, vocab_size, pattern, min_frequency=2):
    chunks = collections.Counter(c for t in texts for c in regex.findall(pattern, t))
    # identical chunks merge identically: keep one copy and a weight
    words = [list(c.encode("utf-8")) for c in chunks]
    weights = list(chunks.values())
    merges = []
    while 256 + len(merges) < vocab_size:
        counts = collections.Counter()  # recount everything, every time
        for word, weight in zip(words, weights):
            for i in range(len(word) - 1):
                counts[word[i], word[i + 1]] += weight
        if not counts:
            break
        top = max(counts.values())
        if top < min_frequency:
            break
        pair = min(p for p, c in counts.items() if c == top)  # tie: smallest pair
        words = [reference_merge(w, pair, 256 + len(merges)) for w in words]
        merges.append(pair)
    return merges


def test_known_answer_aaabdaaabac():
    tok = BPETokenizer()
    tok.train_from_iterator(["aaabdaaabac"], vocab_size=259)
    assert tok.encode("aaabdaaabac") == [258, 100, 258, 97, 99]
    assert tok.merges == [(97, 97), (97, 98), (256, 257)]
    assert tok.vocab_size == 259
    assert tok.decode([258]) == "aaab"


def test_worked_examples_of_the_two_tiny_functions():
    assert get_stats([1, 2, 3, 1, 2]) == {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    assert merge([1, 2, 3, 1, 2], (1, 2), 4) == [4, 3, 4]
    assert get_stats([7, 7, 7]) == {(7, 7): 2}  # overlapping occurrences count
    assert merge([7, 7, 7], (7, 7), 9) == [9, 7]  # merging is left to right
    assert merge([7, 7, 7, 7], (7, 7), 9) == [9, 9]


@pytest.mark.parametrize("pattern", [GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN],
                         ids=["gpt2", "gpt4"])
def test_trainers_equal_the_reference_on_real_text(shakespeare, pattern):
    text = shakespeare[:30_000]
    expected = reference_train([text], 420, pattern)
    assert len(expected) == 164
    assert train_naive(text, 420, pattern) == expected
    assert train_bpe([text], 420, pattern) == expected


def test_fast_trainer_equals_the_reference_on_many_texts(shakespeare):
    texts = shakespeare[:60_000].split("\n\n")  # speeches: merges never cross texts
    expected = reference_train(texts, 400, GPT4_SPLIT_PATTERN)
    assert train_bpe(texts, 400, GPT4_SPLIT_PATTERN) == expected


runs = st.text(alphabet="ab \n", max_size=60)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(runs, max_size=4), vocab_size=st.integers(256, 275),
       min_frequency=st.integers(1, 3))
def test_fast_trainer_equals_the_reference_on_runs(texts, vocab_size, min_frequency):
    # runs such as "aaaa" are where incremental counting goes wrong
    expected = reference_train(texts, vocab_size, GPT4_SPLIT_PATTERN, min_frequency)
    got = train_bpe(texts, vocab_size, GPT4_SPLIT_PATTERN, min_frequency)
    assert got == expected


def test_overlapping_runs():
    # "aaaa": (a, a) occurs 3 times; merging gives [256, 256], then (256, 256)
    assert train_bpe(["aaaa"], 300, min_frequency=1) == [(97, 97), (256, 256)]
    # "aaaaa" -> [256, 256, 97]: (256, 256) and (256, 97) tie, the smaller wins
    assert train_bpe(["aaaaa"], 300, min_frequency=1) == [(97, 97), (256, 97),
                                                          (256, 257)]


def test_ties_go_to_the_smallest_pair():
    # (b, c) and (a, b)... every pair occurs twice; (97, 98) is the smallest
    assert train_bpe(["abc abc"], 257) == [(97, 98)]
    assert train_bpe(["cab cab"], 257) == [(97, 98)]


def test_pairs_never_cross_chunks():
    # "a" and "b" are adjacent only across the chunk boundary "a" | "!b"
    assert train_bpe(["a!b a!b a!b"], 300, GPT2_SPLIT_PATTERN) == [(32, 97)]
    assert count_chunks(["a!b a!b"], GPT2_SPLIT_PATTERN) == {
        "a": 1, "!": 2, "b": 2, " a": 1}


def test_the_documents_two_sentence_call_stops_early():
    tok = BPETokenizer()
    tok.train_from_iterator(["Hello world!", "Attention is all you need."])
    assert tok.merges == [(108, 108)]  # "ll" is the only pair that repeats
    assert tok.vocab_size == 257
    tokens = tok.encode("Hello world!")
    assert tok.decode(tokens) == "Hello world!"
    assert 256 in tokens


def test_min_frequency_and_small_inputs():
    assert train_bpe([], 300) == []
    assert train_bpe([""], 300) == []
    assert train_bpe(["ab"], 300) == []  # one occurrence < min_frequency=2
    assert train_bpe(["ab"], 300, min_frequency=1) == [(97, 98)]
    assert train_bpe("abab", 300) == [(97, 98)]  # a single str is one text


def test_vocab_size_checks():
    tok = BPETokenizer()
    with pytest.raises(ValueError, match="at least 256"):
        tok.train_from_iterator(["abc"], vocab_size=100)
    tok.register_special_tokens({"<|end|>": 300})
    with pytest.raises(ValueError, match="register them after training"):
        tok.train_from_iterator(["abc"], vocab_size=512)


def test_show_progress_draws_a_bar(capsys):
    tok = BPETokenizer()
    tok.train_from_iterator(["abab abab cdcd"], vocab_size=270, show_progress=True)
    assert "BPE merges" in capsys.readouterr().err
    assert tok.merges == train_bpe(["abab abab cdcd"], 270)


def test_fast_training_at_vocab_2048_is_fast(shakespeare):
    merges = train_bpe([shakespeare], 2048)
    assert len(merges) == 2048 - 256
    assert len(set(merges)) == len(merges)
    assert all(max(pair) < 256 + i for i, pair in enumerate(merges))


def test_fast_trainer_equals_the_reference_on_unicode_and_code():
    # multi-byte characters, emoji with joiners, code indentation and runs
    text = ("def f(x):\n    return x ** 2  # 👨\u200d👩\u200d👧\n" * 3
            + "中文分词很难，日本語も。naïve café " * 5 + "=" * 40 + " aaaaaaa " * 4)
    for pattern in (GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN):
        for min_frequency in (1, 2, 3):
            expected = reference_train([text], 420, pattern, min_frequency)
            assert train_bpe([text], 420, pattern, min_frequency) == expected


def test_lines_train_like_the_reference(shakespeare):
    lines = shakespeare[:40_000].splitlines(keepends=True)
    assert train_bpe(lines, 450, GPT2_SPLIT_PATTERN) == reference_train(
        lines, 450, GPT2_SPLIT_PATTERN)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=6), st.integers(1, 5)), max_size=20))
def test_the_first_pair_count_equals_a_loop_over_the_words(corpus):
    from netcl_lite.text.train import _index_pairs

    words = [raw.decode("latin-1") for raw, _ in corpus]
    freqs = [freq for _, freq in corpus]
    counts, where = _index_pairs(words, freqs)
    expected, holders = collections.Counter(), collections.defaultdict(list)
    for i, (word, freq) in enumerate(zip(words, freqs)):
        for left, right in zip(word, word[1:]):
            expected[left + right] += freq
            if i not in holders[left + right]:
                holders[left + right].append(i)
    assert dict(counts) == dict(expected) and where == dict(holders)
