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

import numpy as np

from .cache import IDS

POS_BITS = 23  # a batch holds fewer than 2**23 tokens, so a position fits
NONE = 1 << 39  # the "rank" of a pair without a merge; real ranks are lower
TAIL = 32  # this many chunks left, and `finish` merges them one by one
EMPTY = -1  # PairMemo's free slot; every pair key is >= 0
GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio, odd


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
    again in a hash table held in two numpy arrays, for all of a step's
    pairs in a few numpy calls. Only pairs it has never seen go to
    `lookup`, a slower function in Python (a dict lookup per pair). A first
    pass over 10 MB of text asks for 1.25 million pairs, 91,000 of them
    distinct.

    The table is open addressing with linear probing: a pair's key (left *
    2**32 + right) has a home slot, from the high bits of key * GOLDEN (an
    odd constant near 2**64 / golden ratio), and sits there or in the first
    free slot after it. It is kept at most half full, so a search ends after
    a slot or two. All searches advance together: each round moves on only
    those that met another pair's key.

    >>> ranks = {(97, 97): 256, (256, 97): 257}
    >>> def lookup(left, right):  # (k,), (k,) -> (k,)
    ...     pairs = zip(left.tolist(), right.tolist())
    ...     return np.array([ranks.get(pair, NONE) for pair in pairs])
    >>> memo = PairMemo(lookup)
    >>> memo(np.array([97, 256, 98]), np.array([97, 97, 97])).tolist() == [256, 257, NONE]
    True
    >>> memo.size  # pairs remembered, the one without a merge too
    3
    """

    def __init__(self, lookup, bits=12):
        self.lookup = lookup
        self.size = 0
        self._empty_table(bits)

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
        memo._insert(keys, np.fromiter(ranks.values(), np.int64, len(ranks)))
        return memo

    def __call__(self, left, right):  # (k,), (k,) -> (k,) ranks
        keys = left << 32 | right
        slot = self._find(keys)
        ranks = self.ranks[slot]
        missing = self.keys[slot] != keys
        if missing.any():
            if self.lookup is None:  # it knows every merge
                ranks[missing] = NONE
                return ranks
            new, where = np.unique(keys[missing], return_inverse=True)
            found = self.lookup(new >> 32, new & 0xFFFFFFFF)
            ranks[missing] = found[where]
            self._insert(new, found)
        return ranks

    def _empty_table(self, bits):
        self.bits = bits
        self.keys = np.full(1 << bits, EMPTY, np.int64)  # (slots,) pair keys
        self.ranks = np.zeros(1 << bits, np.int64)  # (slots,) their ranks

    def _home(self, keys):
        """(k,) keys -> (k,) home slots: the top `bits` bits of key * GOLDEN."""
        mixed = keys.view(np.uint64) * GOLDEN  # wraps around, as meant
        return (mixed >> np.uint64(64 - self.bits)).astype(np.int64)

    def _find(self, keys):
        """(k,) keys -> (k,) the slot holding each, or the free slot that
        ends its search."""
        slot = self._home(keys)
        last = len(self.keys) - 1
        search = np.arange(len(keys))  # the searches still going
        while len(search):
            held = self.keys[slot[search]]
            search = search[(held != keys[search]) & (held != EMPTY)]
            slot[search] = (slot[search] + 1) & last  # on to the next slot
        return slot

    def _insert(self, keys, ranks):
        """Put (k,) distinct keys, none of them in the table yet, into it."""
        if 2 * (self.size + len(keys)) > len(self.keys):  # grow it: 4x
            held = self.keys != EMPTY
            keys = np.concatenate([self.keys[held], keys])
            ranks = np.concatenate([self.ranks[held], ranks])
            bits = self.bits
            while 2 * len(keys) > 1 << bits:
                bits += 2
            self.size = 0
            self._empty_table(bits)
        slot = self._home(keys)
        last = len(self.keys) - 1
        while len(keys):
            # each free slot gets one of the keys written to it (which one
            # numpy keeps does not matter): read back to see which
            free = self.keys[slot] == EMPTY
            self.keys[slot[free]] = keys[free]
            gets = free & (self.keys[slot] == keys)
            self.ranks[slot[gets]] = ranks[gets]
            self.size += int(gets.sum())
            keys, ranks = keys[~gets], ranks[~gets]
            slot = (slot[~gets] + 1) & last  # the others try the next slot


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
