"""Incremental BPE training: the merges of `naive.train_naive`, in well under a
second for 1 MB where the naive trainer needs minutes (chapter 1, "Training BPE
fast").

The naive trainer recounts every pair of the corpus after every merge. Three
ideas remove that work; the Rust trainers (Hugging Face `tokenizers`) use the
same ones:

1. Dedupe. Merges never cross a regex chunk, so a chunk is a "word" of byte
   ids, and a corpus has few distinct words: tinyshakespeare's 264,000 chunks
   are 15,000 distinct ones. Keep each word once, with its frequency.
2. Index. Keep `counts` (pair -> occurrences in the corpus) and `where`
   (pair -> indices of the words that contain it, or once did). A merge
   rewrites only the words in `where[pair]` and corrects `counts` for those
   words alone.
3. Lazy heap. A heap of (-count, pair) gives the best pair in O(log n). A
   merge only lowers the counts of the pairs it breaks up, and the pairs it
   forms are new, so each pair is pushed once, when it forms; an entry whose
   count has dropped since is pushed again with its count when it reaches the
   top. The first entry that is up to date is then the most frequent pair.

A word is kept as a string with one character per token (chr(id)), so that
merging a pair in it is one `str.replace`, which merges left to right as
`naive.merge` does, and finding the new token is `str.find`; both run in C.
The counts change only around each new token (`_merge_words` says how).

The heap orders equal counts by pair, and two-character strings compare like
(left, right) tuples, so ties go to the smallest (left, right) exactly as in
`naive.best_pair`; `tests/text` checks that both trainers produce identical
merges on real text.

    >>> train_bpe(["aaabdaaabac"], vocab_size=259)
    [(97, 97), (97, 98), (256, 257)]
"""

import heapq
from collections import Counter, defaultdict
from itertools import chain

import numpy as np

from .patterns import GPT4_SPLIT_PATTERN
from .split import SURROGATE, Splitter, lone_surrogate_error


def count_chunks(texts, pattern=GPT4_SPLIT_PATTERN):
    """Distinct regex chunks of all `texts` with their counts.

    >>> count_chunks(["the cat", "the dog"])
    Counter({'the': 2, ' cat': 1, ' dog': 1})
    """
    if isinstance(texts, str):  # one text, not an iterator of characters
        texts = [texts]
    split = Splitter(pattern)  # = regex.findall(pattern, text), faster
    # Lines repeat (blank lines, a speaker's name), so each distinct text is
    # split once; the counting of its chunks runs in C (Counter over a chain).
    text_counts = Counter(_checked(texts))
    counts = Counter(chain.from_iterable(map(split, text_counts)))
    for text, n in text_counts.items():
        if n > 1:
            for chunk in split(text):
                counts[chunk] += n - 1
    return counts


def _checked(texts):
    """The texts, each checked to be a str that has UTF-8 bytes."""
    for j, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{j}] is a {type(text).__name__}, not a str")
        if not text.isascii() and SURROGATE.search(text):  # no UTF-8 bytes
            raise lone_surrogate_error(text, f"texts[{j}]")
        yield text


def train_bpe(texts, vocab_size, pattern=GPT4_SPLIT_PATTERN, min_frequency=2,
              show_progress=False):
    """Learn up to `vocab_size - 256` merges; returns [(left, right), ...].

    Merge i creates token id 256 + i. Pairs are counted inside chunks only,
    overlapping occurrences included ([7, 7, 7] holds (7, 7) twice); the most
    frequent pair wins, a tie goes to the smallest (left, right). Training
    stops early when the best pair occurs fewer than `min_frequency` times.
    """
    chunk_counts = count_chunks(texts, pattern)
    # one character per token: byte b is chr(b), merge i will be chr(256 + i)
    words = [chunk.encode("utf-8").decode("latin-1") for chunk in chunk_counts]
    freqs = list(chunk_counts.values())  # freqs[i]: how often words[i] occurs

    counts, where = _index_pairs(words, freqs)
    # a pair below min_frequency can never win (counts only drop): no entry
    heap = [(-count, pair) for pair, count in counts.items()
            if count >= min_frequency]
    heapq.heapify(heap)

    progress = _progress_bar(vocab_size - 256) if show_progress else None
    merges = []
    for idx in range(256, vocab_size):
        pair = _pop_best(heap, counts)
        if pair is None or counts[pair] < min_frequency:
            break  # no pair repeats (enough): the vocabulary is complete
        merges.append((ord(pair[0]), ord(pair[1])))
        formed = _merge_words(words, freqs, where, counts, pair, chr(idx))
        del counts[pair]  # it no longer occurs
        for new_pair, (count, holders) in formed.items():
            counts[new_pair] = count
            if count >= min_frequency:  # else it can never win: no entry
                where[new_pair] = holders
                heapq.heappush(heap, (-count, new_pair))
        if progress is not None:
            progress.update(1)
    if progress is not None:
        progress.close()
    return merges


def _index_pairs(words, freqs):
    """Count the pairs of all words at once, with numpy: -> (counts, where).

    counts: pair ("ab": two tokens) -> occurrences in the corpus, each
    word's pairs times its frequency; where: pair -> the indices of the
    words that hold it, in increasing order. Every character is a byte
    here, so a pair is a number below 2**16: left * 256 + right.

    >>> counts, where = _index_pairs(["aab", "ab"], [3, 1])
    >>> dict(counts), where
    ({'aa': 3, 'ab': 4}, {'aa': [0], 'ab': [0, 1]})
    """
    n = len(words)
    chars = np.frombuffer("".join(words).encode("latin-1"), np.uint8)
    lengths = np.fromiter(map(len, words), np.int64, n)
    word = np.repeat(np.arange(n), lengths)  # (chars,) the word of each
    inner = word[:-1] == word[1:]  # (chars - 1,) a pair inside one word
    pair = (chars[:-1].astype(np.int64) << 8 | chars[1:])[inner]  # (pairs,)
    holder = word[:-1][inner]  # (pairs,) the word that holds it
    weight = np.asarray(freqs, np.int64)[holder]
    if not len(pair):  # no word is longer than one token
        return defaultdict(int), {}
    # total occurrences: sort by pair, sum each run (integers, exactly)
    order = np.argsort(pair, kind="stable")
    pair, holder, weight = pair[order], holder[order], weight[order]
    first = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])  # (distinct,)
    total = np.add.reduceat(weight, first)
    # each holder once per pair: the stable sort kept holders increasing
    once = np.r_[True, (pair[1:] != pair[:-1]) | (holder[1:] != holder[:-1])]
    cut = np.cumsum(once)[first] - 1  # where each pair's holders begin
    holders = np.split(holder[once], cut[1:])
    names = [chr(p >> 8) + chr(p & 255) for p in pair[first].tolist()]
    counts = defaultdict(int, zip(names, total.tolist()))
    where = dict(zip(names, map(np.ndarray.tolist, holders)))
    return counts, where


def _pop_best(heap, counts):
    """Pop entries until one matches the current count of its pair.

    Counts only drop after a pair is pushed, so an entry is either up to date
    or too high: a too-high one goes back with its current count.
    """
    while heap:
        neg_count, pair = heapq.heappop(heap)
        count = counts.get(pair, 0)
        if count == -neg_count:
            return pair
        if count > 0:
            heapq.heappush(heap, (-count, pair))  # lower now; maybe still the best
    return None


def _merge_words(words, freqs, where, counts, pair, new):
    """Merge `pair` into the token `new` in every word that has it.

    Lowers `counts` for the pairs the merge breaks up and returns the pairs
    it forms (all of them hold `new`): pair -> [count, indices of the words
    that hold it]. Only the neighbours of
    each new token change. With L, R = pair and x, y its neighbours, a merge
    turns "x L R y" into "x N y": (x, L) and (R, y) are gone, (x, N) and
    (N, y) are new. Where two merges touch, "L R L R" becomes "N N": the pair
    that is gone between them is (R, L), the new one is (N, N).
    """
    left, right = pair
    formed = {}
    for i in where.pop(pair):
        word = words[i]
        if pair not in word:
            continue  # the index is stale: an earlier merge consumed the pair
        merged = word.replace(pair, new)
        words[i] = merged
        freq = freqs[i]
        last = len(merged) - 1
        at = merged.find(new)
        while at >= 0:
            if at > 0:
                before = merged[at - 1]
                counts[(right if before == new else before) + left] -= freq
                _form(formed, before + new, freq, i)
            if at < last:
                after = merged[at + 1]
                if after != new:  # a new token after it counts from there
                    counts[right + after] -= freq
                    _form(formed, new + after, freq, i)
            at = merged.find(new, at + 1)
    return formed


def _form(formed, pair, freq, i):
    entry = formed.get(pair)
    if entry is None:
        formed[pair] = [freq, [i]]
    else:
        entry[0] += freq
        entry[1].append(i)


def _progress_bar(total):
    try:  # imported here: only needed for show_progress
        from tqdm.auto import tqdm
    except ImportError as err:
        raise ImportError("show_progress=True draws a tqdm bar: pip install "
                          "'netcl_lite[course]'") from err

    return tqdm(total=total, desc="BPE merges", unit="merge")
