"""Reference answers for chapter 10's exercises."""

import numpy as np


def exercise_1(A, k):
    """offset_score: mean of A[..., i, i - k] over queries i >= k, per head."""
    A = np.asarray(A)
    i = np.arange(k, A.shape[-1])
    return A[:, :, i, i - k].mean(axis=(0, 2))           # (H,)


def exercise_2(ids):
    """induction_predict: the token after the last earlier occurrence, or -1."""
    last, out = {}, []
    for i, t in enumerate(ids):
        out.append(ids[last[t] + 1] if t in last else -1)
        last[t] = i
    return out


def exercise_3(A, ids):
    """token_induction_score: weight on the positions after earlier
    occurrences of the query's token, averaged over queries that have one."""
    A, ids = np.asarray(A), np.asarray(ids)
    S = ids.shape[1]
    j, i = np.arange(S)[None, :], np.arange(S)[:, None]
    total, count = np.zeros(A.shape[1]), 0
    for b in range(ids.shape[0]):
        same = (ids[b][:, None] == ids[b][None, :]) & (j < i)   # (S, S): j < i
        target = np.zeros((S, S), bool)
        target[:, 1:] = same[:, :-1]                  # key j + 1 for each j
        has = same.any(axis=1)                        # queries with a match
        total += (A[b] * target).sum(axis=-1)[:, has].sum(axis=-1)
        count += has.sum()
    return total / count
