"""The teaching BPE trainer: recount every pair after every merge (chapter 1).

Two tiny functions are the whole algorithm:

    >>> get_stats([1, 2, 3, 1, 2])
    {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    >>> merge([1, 2, 3, 1, 2], (1, 2), 4)
    [4, 3, 4]

`train_naive` repeats "count all pairs, merge the most frequent one". It is
easy to check by hand and slow: every merge rescans the whole corpus, so 1 MB
at vocab 512 takes over a minute. `train.py` produces the same merges with
incremental bookkeeping; the benchmark (`bench/tokenizer.py`) times both.

    >>> train_naive("aaabdaaabac", vocab_size=259)
    [(97, 97), (97, 98), (256, 257)]
"""

import regex

from .patterns import GPT4_SPLIT_PATTERN


def get_stats(ids, counts=None):
    """Count adjacent pairs; overlapping ones count: [7, 7, 7] has (7, 7) twice.

    Pass `counts` to add into an existing dict (one chunk after another).
    """
    counts = {} if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids, pair, idx):
    """Replace each occurrence of `pair` in `ids` by `idx`, left to right.

    Occurrences cannot overlap: merge([7, 7, 7], (7, 7), 9) -> [9, 7].
    """
    left, right = pair
    out = []
    i = 0
    n = len(ids)
    while i < n:
        if ids[i] == left and i + 1 < n and ids[i + 1] == right:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def best_pair(counts):
    """The most frequent pair; a tie goes to the smallest (left, right).

    >>> best_pair({(5, 1): 3, (2, 9): 3, (0, 0): 1})
    (2, 9)
    """
    return min(counts, key=lambda pair: (-counts[pair], pair))


def train_naive(text, vocab_size, pattern=GPT4_SPLIT_PATTERN, min_frequency=2):
    """Learn `vocab_size - 256` merges from `text`; returns [(left, right), ...].

    Merge i creates token id 256 + i. Training stops early when no pair occurs
    at least `min_frequency` times.
    """
    chunks = [list(c.encode("utf-8")) for c in regex.findall(pattern, text)]
    merges = []
    for idx in range(256, vocab_size):
        counts = {}
        for ids in chunks:  # recount everything: this is what makes it slow
            get_stats(ids, counts)
        if not counts:
            break
        pair = best_pair(counts)
        if counts[pair] < min_frequency:
            break
        chunks = [merge(ids, pair, idx) for ids in chunks]
        merges.append(pair)
    return merges
