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
   (pair -> indices of the words that contain it). A merge rewrites only the
   words in `where[pair]` and corrects `counts` for those words alone.
3. Lazy heap. A heap of (-count, pair) gives the best pair in O(log n). When a
   count changes we push a fresh entry instead of searching for the old one;
   an entry whose count is out of date is skipped when it reaches the top.

The heap orders equal counts by pair, so ties go to the smallest (left, right)
exactly as in `naive.best_pair`, and `tests/text` checks that both trainers
produce identical merges on real text.

    >>> train_bpe(["aaabdaaabac"], vocab_size=259)
    [(97, 97), (97, 98), (256, 257)]
"""

import heapq
from collections import Counter, defaultdict

from .naive import merge
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
    counts = Counter()
    for j, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{j}] is a {type(text).__name__}, not a str")
        if not text.isascii() and SURROGATE.search(text):  # no UTF-8 bytes
            raise lone_surrogate_error(text, f"texts[{j}]")
        counts.update(split(text))
    return counts


def train_bpe(texts, vocab_size, pattern=GPT4_SPLIT_PATTERN, min_frequency=2,
              show_progress=False):
    """Learn up to `vocab_size - 256` merges; returns [(left, right), ...].

    Merge i creates token id 256 + i. Pairs are counted inside chunks only,
    overlapping occurrences included ([7, 7, 7] holds (7, 7) twice); the most
    frequent pair wins, a tie goes to the smallest (left, right). Training
    stops early when the best pair occurs fewer than `min_frequency` times.
    """
    chunk_counts = count_chunks(texts, pattern)
    words = [list(chunk.encode("utf-8")) for chunk in chunk_counts]  # byte ids
    freqs = list(chunk_counts.values())  # freqs[i]: how often words[i] occurs

    counts = defaultdict(int)  # pair -> number of occurrences in the corpus
    where = defaultdict(set)  # pair -> indices of the words that contain it
    for i, word in enumerate(words):
        for pair in zip(word, word[1:]):
            counts[pair] += freqs[i]
            where[pair].add(i)
    heap = [(-count, pair) for pair, count in counts.items()]
    heapq.heapify(heap)

    progress = _progress_bar(vocab_size - 256) if show_progress else None
    merges = []
    for idx in range(256, vocab_size):
        pair = _pop_best(heap, counts)
        if pair is None or counts[pair] < min_frequency:
            break  # no pair repeats (enough): the vocabulary is complete
        merges.append(pair)
        delta = _merge_words(words, freqs, where, pair, idx)
        for changed, d in delta.items():
            if d == 0:
                continue
            counts[changed] += d
            if counts[changed] > 0:
                heapq.heappush(heap, (-counts[changed], changed))
            else:
                del counts[changed]  # e.g. `pair` itself: it no longer occurs
        if progress is not None:
            progress.update(1)
    if progress is not None:
        progress.close()
    return merges


def _pop_best(heap, counts):
    """Pop entries until one matches the current count of its pair."""
    while heap:
        neg_count, pair = heapq.heappop(heap)
        if counts.get(pair) == -neg_count:
            return pair
    return None


def _merge_words(words, freqs, where, pair, idx):
    """Merge `pair` -> `idx` in every word that has it; returns pair -> count change.

    Each rewritten word takes back all its old pairs and adds all its new
    ones, times its frequency. That is simple and exact even for runs such as
    [7, 7, 7, 7], where local +-1 bookkeeping is easy to get wrong.
    """
    delta = defaultdict(int)
    for i in where.pop(pair):
        word = words[i]
        new = merge(word, pair, idx)
        if len(new) == len(word):
            continue  # the index is stale: an earlier merge consumed the pair
        freq = freqs[i]
        for old_pair in zip(word, word[1:]):
            delta[old_pair] -= freq
        for new_pair in zip(new, new[1:]):
            delta[new_pair] += freq
            if idx in new_pair:  # only pairs with the new id are new to `where`
                where[new_pair].add(i)
        words[i] = new
    return delta


def _progress_bar(total):
    from tqdm.auto import tqdm  # imported here: only needed for show_progress

    return tqdm(total=total, desc="BPE merges", unit="merge")
