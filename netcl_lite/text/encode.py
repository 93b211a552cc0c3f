"""Encoding one chunk: apply the learned merges, lowest rank first (chapter 1).

Merge i made token 256 + i, so a merge's new id is also its rank: the earlier
it was learned, the earlier it applies. The teaching encoder rescans the chunk
for the lowest-ranked pair after every merge, O(n^2) for an n-byte chunk; one
80,000-letter chunk then takes seconds. Here a heap holds the mergeable pairs
and a doubly linked list holds the tokens, so each merge costs O(log n):

    >>> ranks = {(97, 97): 256, (97, 98): 257, (256, 257): 258}
    >>> merge_by_rank([97, 97, 97, 98, 100], ranks)
    [258, 100]

Among equal ranks the leftmost pair goes first, which is the same as merging
all occurrences left to right: merge_by_rank([97, 97, 97], ranks) -> [256, 97].
"""

import heapq


def merge_by_rank(ids, ranks):
    """Merge the pairs of one chunk in rank order; ids -> merged ids.

    `ranks` maps (left, right) to the id of the merged token (= its rank).
    """
    n = len(ids)
    if n < 2:
        return list(ids)
    ids = list(ids)  # ids[i] = -1 once token i was merged into its left neighbour
    nxt = list(range(1, n + 1))  # nxt[i]: index of the next live token (n = end)
    prv = list(range(-1, n - 1))  # prv[i]: index of the previous one (-1 = start)
    heap = []  # (rank, i): the pair that starts at token i can merge into `rank`
    for i in range(n - 1):
        rank = ranks.get((ids[i], ids[i + 1]))
        if rank is not None:
            heap.append((rank, i))
    heapq.heapify(heap)

    while heap:
        rank, i = heapq.heappop(heap)
        j = nxt[i]
        # Skip outdated entries: token i or its neighbour changed since the push.
        # A rank names exactly one pair, so comparing ranks compares the pairs.
        if j == n or ranks.get((ids[i], ids[j])) != rank:
            continue
        ids[i] = rank  # tokens i and j become one token at i
        ids[j] = -1
        k = nxt[j]
        nxt[i] = k
        if k < n:
            prv[k] = i
        # the merged token forms new pairs with both neighbours
        h = prv[i]
        if h >= 0:
            left_rank = ranks.get((ids[h], rank))
            if left_rank is not None:
                heapq.heappush(heap, (left_rank, h))
        if k < n:
            right_rank = ranks.get((rank, ids[k]))
            if right_rank is not None:
                heapq.heappush(heap, (right_rank, i))
    return [t for t in ids if t >= 0]
