"""Encoding one chunk: apply the learned merges, lowest rank first (chapter 1).

Merge i made token 256 + i, so a merge's new id is also its rank: the earlier
it was learned, the earlier it applies. The rule, for any chunk: merge the
adjacent pair of lowest rank; among equal ranks, the leftmost. Repeat until
no adjacent pair has a rank.

    >>> ranks = {(97, 97): 256, (97, 98): 257, (256, 257): 258}
    >>> merge_by_rank([97, 97, 97, 98, 100], ranks)
    [258, 100]

Among equal ranks the leftmost pair goes first, which is the same as merging
all occurrences left to right: merge_by_rank([97, 97, 97], ranks) -> [256, 97].

Three ways to follow that rule, each fastest for some chunks; all three give
the same ids (tests/text/test_text_encode.py checks them against a textbook
rescan):

- `_rescan`, for short chunks (most of them): keep the rank of every
  adjacent pair in a list, and let `min` and `list.index` (both run in C)
  find the lowest, leftmost one after each merge. O(n^2) for n tokens, which
  for a word of a few bytes is less work than any bookkeeping.
- `_by_rounds`, for long chunks such as "a" * 1_000_000: write the tokens as
  a string, one character per id, and apply one merge to the whole chunk at
  once with `str.replace`, which merges all occurrences left to right, as
  the rule does. A round costs a few passes in C over the chunk, so it pays
  while a round merges many pairs; when a round merges few, the rest goes to
  the heap. It is the rule only while a merge never creates a pair that
  ranks below it (always true of merges learned in order), so it checks
  that, and hands the chunk to the heap otherwise.
- `_heap`, for everything else: a heap of (rank, position) over a doubly
  linked list of the tokens, O(log n) per merge, so a long chunk of varied
  text never rescans (tiktoken's issue 245 was such a rescan, quadratic).

A tiktoken vocabulary lists tokens, not merges: two tokens merge when their
joined bytes are a token, at that token's rank, which is also its id. For
short chunks `merge_bytes_by_rank` follows the same rule on the bytes
themselves, so each pair costs one `bytes` join and one dict lookup, both
in C, instead of translating ids to bytes first:

    >>> token_ranks = {bytes([b]): b for b in range(256)}
    >>> token_ranks.update({b"aa": 256, b"ab": 257, b"aaab": 258})
    >>> merge_bytes_by_rank(b"aaabd", token_ranks)
    [258, 100]

`made` generalizes "the new id is the rank": `made[rank]` is the id of the
token a merge makes, for vocabularies (a `tokenizer.json`) whose ids do not
follow the order of their merges, or where several merges make one token.
"""

import heapq
from itertools import repeat
from operator import add

_BYTES = [bytes([b]) for b in range(256)]  # _BYTES[b]: byte b as a bytes object
SHORT = 96  # tokens; up to here `_rescan`, above it the other two
ROUND_SHARE = 256  # a round must merge at least 1 / ROUND_SHARE of the chunk
_NONE = 1 << 62  # the "rank" of a pair that has none, above every real rank


def merge_by_rank(ids, ranks, made=None):
    """Merge the pairs of one chunk in rank order; ids -> merged ids.

    `ranks` maps (left, right) to the rank of their merge; the merged token
    is `made[rank]`, or the rank itself when `made` is None (merge i makes
    token 256 + i, so its rank is its id).
    """
    n = len(ids)
    if n < 2:
        return list(ids)
    if n <= SHORT:
        return _rescan(ids, ranks, made)
    return _by_rounds(ids, ranks, made)


def _rescan(ids, ranks, made):
    """Find the lowest, leftmost pair with C-speed `min` and `index`; merge it."""
    ids = list(ids)
    get = ranks.get
    pair_ranks = list(map(get, zip(ids, ids[1:]), repeat(_NONE)))
    while pair_ranks:
        rank = min(pair_ranks)
        if rank == _NONE:
            break
        i = pair_ranks.index(rank)  # the leftmost of equal ranks
        new = rank if made is None else made[rank]
        ids[i] = new  # tokens i and i + 1 become one
        del ids[i + 1]
        del pair_ranks[i]  # the merged pair; pair i is now (new, next token)
        if i < len(pair_ranks):
            pair_ranks[i] = get((new, ids[i + 1]), _NONE)
        if i:
            pair_ranks[i - 1] = get((ids[i - 1], new), _NONE)
    return ids


def merge_bytes_by_rank(piece, token_ranks):
    """`_rescan` for a tiktoken vocabulary {token bytes: rank}: bytes -> ids.

    The tokens are kept as their bytes; a pair's rank is the rank of the
    two joined, when that is a token. Meant for short chunks (up to SHORT
    bytes), like `_rescan`. Its loop is `_rescan`'s, written out again
    rather than shared through a function argument: a Python call per pair
    is what this version exists to avoid.
    """
    parts = list(map(_BYTES.__getitem__, piece))  # one bytes object per token
    get = token_ranks.get
    pair_ranks = list(map(get, map(add, parts, parts[1:]), repeat(_NONE)))
    while pair_ranks:
        rank = min(pair_ranks)
        if rank == _NONE:
            break
        i = pair_ranks.index(rank)  # the leftmost of equal ranks
        new = parts[i] + parts[i + 1]  # tokens i and i + 1 become one
        parts[i] = new
        del parts[i + 1]
        del pair_ranks[i]
        if i < len(pair_ranks):
            pair_ranks[i] = get(new + parts[i + 1], _NONE)
        if i:
            pair_ranks[i - 1] = get(parts[i - 1] + new, _NONE)
    return list(map(token_ranks.__getitem__, parts))


def _by_rounds(ids, ranks, made):
    """One merge at a time over the whole chunk, with `str.replace`.

    The chunk is a string with one character per token id. Every pair that
    occurs is in the heap `todo` as (rank, two-character string). A round
    pops the lowest rank that still occurs, replaces all of its occurrences
    and pushes the pairs that the new token forms with its neighbours.
    """
    get = ranks.get
    try:
        text = "".join(map(chr, ids))
    except ValueError:  # an id above 0x10FFFF has no character
        return _heap(ids, ranks, made)
    todo = []
    for pair in set(map(add, text, text[1:])):
        rank = get((ord(pair[0]), ord(pair[1])))
        if rank is not None:
            todo.append((rank, pair))
    heapq.heapify(todo)
    while todo:
        rank, pair = heapq.heappop(todo)
        if pair not in text:
            continue  # an earlier round used it up
        while todo and todo[0][0] == rank:  # another pair of the same rank?
            other = heapq.heappop(todo)[1]
            if other != pair and other in text:  # the leftmost would go first
                return _heap(list(map(ord, text)), ranks, made)
        try:
            new = chr(rank if made is None else made[rank])
        except ValueError:
            return _heap(list(map(ord, text)), ranks, made)
        merged = text.replace(pair, new)
        pieces = merged.split(new)  # the text between the new tokens
        formed = set()  # the pairs the new token forms with its neighbours
        if pieces[0]:
            formed.add(pieces[0][-1] + new)
        if pieces[-1]:
            formed.add(new + pieces[-1][0])
        for piece in set(pieces[1:-1]):
            if piece:
                formed.add(new + piece[0])
                formed.add(piece[-1] + new)
            else:  # two new tokens side by side: "LRLR" -> "NN"
                formed.add(new + new)
                # merged one at a time, the first made (N, L) for a moment
                formed.add(new + pair[0])
        for near in formed:
            next_rank = get((ord(near[0]), ord(near[1])))
            if next_rank is None:
                continue
            if next_rank <= rank:  # it would merge before this round's others
                return _heap(list(map(ord, text)), ranks, made)
            heapq.heappush(todo, (next_rank, near))
        merged_pairs = len(text) - len(merged)
        text = merged
        if merged_pairs * ROUND_SHARE < len(text):  # rounds no longer pay
            return _heap(list(map(ord, text)), ranks, made)
    return list(map(ord, text))


def _heap(ids, ranks, made):
    """A heap of (rank, position) over a doubly linked list of the tokens."""
    n = len(ids)
    if n < 2:
        return list(ids)
    ids = list(ids)  # ids[i] = -1 once token i was merged into its left neighbour
    nxt = list(range(1, n + 1))  # nxt[i]: index of the next live token (n = end)
    prv = list(range(-1, n - 1))  # prv[i]: index of the previous one (-1 = start)
    # A heap entry is one int, rank * 2^shift + i: the pair that starts at
    # token i merges at `rank`. Ints compare faster than (rank, i) tuples,
    # and sort the same way: by rank, then leftmost.
    shift = n.bit_length()
    position = (1 << shift) - 1
    get = ranks.get
    heap = []
    for i in range(n - 1):
        rank = get((ids[i], ids[i + 1]))
        if rank is not None:
            heap.append(rank << shift | i)
    heapq.heapify(heap)

    while heap:
        entry = heapq.heappop(heap)
        rank, i = entry >> shift, entry & position
        j = nxt[i]
        # Skip outdated entries: token i or its neighbour changed since the push.
        # A rank names exactly one pair, so comparing ranks compares the pairs.
        if j == n or get((ids[i], ids[j])) != rank:
            continue
        new = rank if made is None else made[rank]
        ids[i] = new  # tokens i and j become one token at i
        ids[j] = -1
        k = nxt[j]
        nxt[i] = k
        if k < n:
            prv[k] = i
        # the merged token forms new pairs with both neighbours
        h = prv[i]
        if h >= 0:
            left_rank = get((ids[h], new))
            if left_rank is not None:
                heapq.heappush(heap, left_rank << shift | h)
        if k < n:
            right_rank = get((new, ids[k]))
            if right_rank is not None:
                heapq.heappush(heap, right_rank << shift | i)
    return [t for t in ids if t >= 0]
