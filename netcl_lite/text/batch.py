"""Merging many chunks at once, with numpy (chapter 1).

A first pass over a long text meets tens of thousands of chunks that the
cache (cache.py) does not know yet. `encode._rescan` merges each of them
in a Python loop of its own, about ten microseconds a chunk, and that is
most of a first pass's time. `merge_many` follows the same rule (merge the
pair of lowest rank, the leftmost among equal ranks, and repeat) for all
of the new chunks together. Each step makes one merge in every chunk that
still has a pair to merge, with a few numpy operations over all of their
tokens at once:

1. position i holds the rank of the pair (token i, token i + 1), or NONE
   where that pair has no merge or token i ends its chunk;
2. `np.minimum.reduceat` over each chunk finds its pair to merge. The key
   is rank * 2**POS_BITS + position, so the lowest rank wins and, among
   equal ranks, the leftmost;
3. the pair becomes its new token, and only the two pairs beside it need
   new ranks: two lookups per chunk and step, not one per token.

A chunk left with no pair to merge is finished and leaves the arrays, so
the steps get cheaper as they go. The steps a batch takes are the merges
of its longest chunk, so the tokenizer sends only short chunks here.

    >>> ranks = {(97, 97): 256, (97, 98): 257, (256, 257): 258}
    >>> def rank_of(left, right):
    ...     pairs = zip(left.tolist(), right.tolist())
    ...     return np.array([ranks.get(pair, NONE) for pair in pairs])
    >>> tokens = [97, 97, 97, 98, 100] + [97, 97, 97] + [100]
    >>> tokens, lengths = merge_many(np.array(tokens), np.array([5, 3, 1]), rank_of)
    >>> tokens.tolist(), lengths.tolist()  # "aaabd" -> [258, 100], as merge_by_rank
    ([258, 100, 256, 97, 100], [2, 2, 1])
"""

from itertools import repeat

import numpy as np

from .cache import IDS

POS_BITS = 23  # a batch holds fewer than 2**23 tokens, so a position fits
NONE = 1 << 39  # the "rank" of a pair without a merge; real ranks are lower
TAIL = 32  # this many chunks left, and `finish` merges them one by one


def merge_many(tokens, lengths, rank_of, made=None, finish=None):
    """Merge every chunk by rank; (tokens, lengths) -> (tokens, lengths).

    tokens: (n,) the ids of all chunks, one after the other; lengths: (c,)
    each chunk's length, all >= 1. rank_of(left, right) takes two (k,) id
    arrays and gives the (k,) int64 ranks, NONE where the pair has no merge.
    The new token is made[rank], or the rank itself when `made` is None.
    Returns the merged chunks in the same order, as (m,) tokens and (c,)
    lengths.

    finish(ids) -> ids, when given, merges the last TAIL chunks one by one
    (encode.merge_by_rank): a step costs the same few numpy calls for ten
    chunks as for ten thousand, and the longest chunks take the most steps.
    """
    tokens = np.array(tokens, np.int64)  # a copy: merged in place
    lengths = np.asarray(lengths, np.int64)
    if len(tokens) >= 1 << POS_BITS:  # too many positions: two halves
        half = len(lengths) // 2
        cut = int(lengths[:half].sum())
        first = merge_many(tokens[:cut], lengths[:half], rank_of, made, finish)
        second = merge_many(tokens[cut:], lengths[half:], rank_of, made, finish)
        return (np.concatenate([first[0], second[0]]),
                np.concatenate([first[1], second[1]]))
    made = None if made is None else np.asarray(made, np.int64)
    chunk = np.arange(len(lengths))  # each live chunk's index in the input
    start = _starts(lengths)  # (c,) where each live chunk begins
    pair = np.full(len(tokens), NONE, np.int64)  # (n,) rank of the pair at i
    inner = np.ones(len(tokens), bool)
    inner[start + lengths - 1] = False  # a chunk's last token starts no pair
    left = np.flatnonzero(inner)
    pair[left] = rank_of(tokens[left], tokens[left + 1])
    finished = [(chunk[:0], lengths[:0], tokens[:0])]  # (chunks, lengths, tokens)
    while len(chunk) > (0 if finish is None else TAIL):
        positions = np.arange(len(tokens))
        key = np.minimum.reduceat((pair << POS_BITS) | positions, start)  # (c,)
        done = key >= NONE << POS_BITS  # no pair left to merge
        live = ~done
        keep = np.ones(len(tokens), bool)  # the tokens still in the arrays
        if done.any():
            gone = np.repeat(done, lengths)
            finished.append((chunk[done], lengths[done], tokens[gone]))
            keep[gone] = False
        at = key[live] & ((1 << POS_BITS) - 1)  # (l,) the merged pair's left
        rank = key[live] >> POS_BITS
        new = rank if made is None else made[rank]
        end = start[live] + lengths[live]
        tokens[at] = new  # tokens at and at + 1 become one
        keep[at + 1] = False
        pair[at] = NONE  # the new token's pair with the token after
        right = at + 2 < end
        pair[at[right]] = rank_of(new[right], tokens[at[right] + 2])
        has_left = at > start[live]
        before = at[has_left] - 1  # the pair of the token before and the new one
        pair[before] = rank_of(tokens[before], new[has_left])
        tokens, pair = tokens[keep], pair[keep]
        chunk, lengths = chunk[live], lengths[live] - 1
        start = _starts(lengths)
    if len(chunk):  # the few left, one by one
        rest = [finish(ids) for ids in np.split(tokens, start[1:].tolist())]
        finished.append((chunk, np.array(list(map(len, rest)), np.int64),
                         np.array([i for ids in rest for i in ids], np.int64)))
    return _in_input_order(finished)


class PairMemo:
    """rank_of for merge_many that remembers: a pair looked up once is found
    again with `np.searchsorted` over a sorted array of pair keys (left *
    2**32 + right), in one numpy call for all of a step's pairs. Only pairs
    it has never seen go to `lookup`, a slower function in Python (a dict
    lookup per pair). A first pass over 10 MB of text asks for 1.25 million
    pairs, 91,000 of them distinct.

    Pairs learned lately wait in the dict `recent` and join the sorted
    arrays in one sort once there are enough of them, so that learning a
    pair costs no copy of the arrays.

    >>> ranks = {(97, 97): 256, (256, 97): 257}
    >>> def lookup(left, right):  # (k,), (k,) -> (k,)
    ...     pairs = zip(left.tolist(), right.tolist())
    ...     return np.array([ranks.get(pair, NONE) for pair in pairs])
    >>> memo = PairMemo(lookup)
    >>> memo(np.array([97, 256, 98]), np.array([97, 97, 97])).tolist() == [256, 257, NONE]
    True
    """

    def __init__(self, lookup):
        self.lookup = lookup
        self.keys = np.zeros(0, np.int64)  # sorted
        self.ranks = np.zeros(0, np.int64)
        self.recent = {}  # pair key -> rank, not yet in the arrays

    @classmethod
    def of_merges(cls, ranks):
        """A memo that knows every merge {(left, right): rank} from the
        start, so a pair it lacks has none: it never calls a lookup.

        >>> memo = PairMemo.of_merges({(97, 97): 256})
        >>> memo(np.array([97, 97]), np.array([97, 98])).tolist() == [256, NONE]
        True
        """
        memo = cls(None)
        keys = np.fromiter((left << 32 | right for left, right in ranks),
                           np.int64, len(ranks))
        order = np.argsort(keys)
        memo.keys = keys[order]
        memo.ranks = np.fromiter(ranks.values(), np.int64, len(ranks))[order]
        return memo

    def __call__(self, left, right):  # (k,), (k,) -> (k,) ranks
        keys = left << 32 | right
        if not len(self.keys):
            return self._learn(keys)
        at = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        ranks = self.ranks[at]
        missing = np.flatnonzero(self.keys[at] != keys)
        if len(missing):
            ranks[missing] = NONE if self.lookup is None else self._learn(keys[missing])
        return ranks

    def _learn(self, keys):
        """Ranks of pairs not in the arrays: from `recent`, else `lookup`."""
        found = np.fromiter(map(self.recent.get, keys.tolist(), repeat(-1)),
                            np.int64, len(keys))
        unknown = found < 0
        new = np.unique(keys[unknown])
        if len(new):
            ranks = self.lookup(new >> 32, new & 0xFFFFFFFF)
            self.recent.update(zip(new.tolist(), ranks.tolist()))
            found[unknown] = ranks[np.searchsorted(new, keys[unknown])]
        if len(self.recent) > max(1024, len(self.keys) // 4):
            keys = np.concatenate([self.keys, np.fromiter(self.recent, np.int64)])
            ranks = np.concatenate([self.ranks,
                                    np.fromiter(self.recent.values(), np.int64)])
            order = np.argsort(keys)
            self.keys, self.ranks, self.recent = keys[order], ranks[order], {}
        return found


def merge_packed(raws, byte_ids, rank_of, made=None, finish=None):
    """Chunks as UTF-8 bytes -> each one's merged ids, packed as the cache
    keeps them (cache.pack). byte_ids[b] is the id of byte b.

    >>> from .cache import unpack
    >>> ranks = {(97, 97): 256}
    >>> def rank_of(left, right):
    ...     pairs = zip(left.tolist(), right.tolist())
    ...     return np.array([ranks.get(pair, NONE) for pair in pairs])
    >>> [unpack(ids) for ids in merge_packed([b"aaa", b"ba"], range(256), rank_of)]
    [[256, 97], [98, 97]]
    """
    lengths = np.fromiter(map(len, raws), np.int64, len(raws))
    raw = np.frombuffer(b"".join(raws), np.uint8)
    tokens = np.asarray(byte_ids, np.int64)[raw]
    tokens, lengths = merge_many(tokens, lengths, rank_of, made, finish)
    packed = tokens.astype(IDS).tobytes()
    ends = np.cumsum(lengths * np.dtype(IDS).itemsize).tolist()
    return list(map(packed.__getitem__, map(slice, [0] + ends[:-1], ends)))


def _starts(lengths):
    """(c,) lengths -> (c,) where each chunk starts: [3, 1, 2] -> [0, 3, 4]."""
    start = np.zeros(len(lengths), np.int64)
    np.cumsum(lengths[:-1], out=start[1:])
    return start


def _in_input_order(finished):
    """The finished chunks, which left in the order they finished, put back
    in the order they came in: -> (tokens, lengths)."""
    chunk, lengths, tokens = (np.concatenate(parts) for parts in zip(*finished))
    order = np.argsort(chunk)  # the finished chunks, in input order
    starts = _starts(lengths)[order]  # where each begins in `tokens`
    lengths = lengths[order]
    # the index in `tokens` of each output token: its chunk's start plus
    # its place in the chunk
    within = np.arange(len(tokens)) - np.repeat(_starts(lengths), lengths)
    return tokens[np.repeat(starts, lengths) + within], lengths
