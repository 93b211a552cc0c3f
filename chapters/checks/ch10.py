"""Checks for chapter 10, induction heads: ``check_k(your_function)``.

Each check runs your function on a few inputs, compares the result with an
independent computation and raises an AssertionError that says what differs.
It prints "Correct!" when all agree.
"""

import numpy as np

from .common import as_array


def _causal_weights(rng, B, H, S):
    """Random attention weights (B, H, S, S): softmax rows, zero above the
    diagonal, as a causal head produces."""
    scores = rng.standard_normal((B, H, S, S)) * 2
    scores[..., np.triu_indices(S, 1)[0], np.triu_indices(S, 1)[1]] = -np.inf
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def check_1(offset_score):
    """offset_score(A, k) -> (H,): mean weight from query i to key i - k."""
    # by hand: one head, S = 3; rows [1], [.25 .75], [.5 .2 .3]
    A = np.array([[[[1.0, 0, 0], [0.25, 0.75, 0], [0.5, 0.2, 0.3]]]])
    for k, want in ((0, (1 + 0.75 + 0.3) / 3), (1, (0.25 + 0.2) / 2), (2, 0.5)):
        got = as_array(offset_score(A, k), "offset_score")
        assert got.shape == (1,), f"one head: want shape (1,), got {got.shape}"
        assert np.allclose(got, want), (
            f"the 3 x 3 example, k={k}: got {got[0]:.4f}, want {want:.4f}. "
            f"Average A[i, i - {k}] over the queries i >= {k} only."
        )
    rng = np.random.default_rng(10)
    A = _causal_weights(rng, 3, 4, 12)
    for k in (1, 5, 11):
        i = np.arange(k, 12)
        want = A[:, :, i, i - k].mean(axis=(0, 2))
        got = as_array(offset_score(A, k), "offset_score", shape=(4,))
        assert np.allclose(got, want), (
            f"random weights (B=3, H=4, S=12), k={k}:\n got {got}\nwant {want}"
        )
    print("Correct!")


def _next_after_last(ids):
    """The reference for check_2, written as a dictionary walk."""
    seen, out = {}, []
    for i, t in enumerate(ids):
        out.append(ids[seen[t] + 1] if t in seen else -1)
        seen[t] = i
    return out


def check_2(induction_predict):
    """induction_predict(ids) -> for each position, the token that followed
    the most recent earlier occurrence of the same token, or -1."""
    cases = [([7, 3, 9, 7], [-1, -1, -1, 3]),
             ([1, 2, 1, 2, 1], [-1, -1, 2, 1, 2]),
             ([5, 5, 5], [-1, 5, 5]),
             ([4], [-1])]
    for ids, want in cases:
        got = induction_predict(list(ids))
        assert got is not None, "induction_predict returned None: return a list"
        got = [int(t) for t in got]
        assert got == want, (
            f"ids {ids}: got {got}, want {want}. Use the MOST RECENT earlier "
            "occurrence of ids[i] and return the token right after it."
        )
    rng = np.random.default_rng(11)
    ids = rng.integers(0, 6, 40).tolist()
    got = [int(t) for t in induction_predict(ids)]
    assert got == _next_after_last(ids), f"random ids {ids}:\n got {got}"
    print("Correct!")


def check_3(token_induction_score):
    """token_induction_score(A, ids) -> (H,): the mean, over queries whose
    token occurred earlier, of the total weight on the positions right after
    those earlier occurrences."""
    # by hand: ids [1, 2, 1]; query 2 (token 1) has the earlier 1 at 0, so
    # the induction target is position 1
    A = np.array([[[[1.0, 0, 0], [0.5, 0.5, 0], [0.1, 0.6, 0.3]],
                   [[1.0, 0, 0], [0.5, 0.5, 0], [0.8, 0.1, 0.1]]]])
    got = as_array(token_induction_score(A, np.array([[1, 2, 1]])),
                   "token_induction_score")
    assert got.shape == (2,), f"two heads: want shape (2,), got {got.shape}"
    assert np.allclose(got, [0.6, 0.1]), (
        f"ids [1, 2, 1]: got {got}, want [0.6, 0.1] (query 2 attends to "
        "position 1, just after the earlier 1)"
    )
    rng = np.random.default_rng(12)
    B, H, S = 2, 3, 16
    A = _causal_weights(rng, B, H, S)
    ids = rng.integers(0, 5, (B, S))
    total, count = np.zeros(H), 0
    for b in range(B):
        for i in range(S):
            after = [j + 1 for j in range(i) if ids[b, j] == ids[b, i]]
            if after:
                total += A[b, :, i, after].sum(axis=0)
                count += 1
    want = total / count
    got = as_array(token_induction_score(A, ids), "token_induction_score",
                   shape=(H,))
    assert np.allclose(got, want), (
        f"random weights (B=2, H=3, S=16), ids from 5 tokens:\n got {got}\n"
        f"want {want}\n(sum over EVERY earlier occurrence, then average over "
        "the queries that have one)"
    )
    print("Correct!")
