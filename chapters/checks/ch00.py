"""Checks for chapter 00: soft lookups. Each check_k(fn) runs your function
on fixed inputs and compares with numpy; it prints "Correct!" or raises
AssertionError with what differs."""

import numpy as np

from .common import as_array


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def check_1(soft_lookup):
    """soft_lookup(query (d,), keys (n, d), values (n, m)) -> (m,)."""
    rng = np.random.default_rng(100)
    for d, n, m in ((4, 4, 3), (8, 5, 2), (2, 1, 6)):
        query = rng.standard_normal(d)
        keys = rng.standard_normal((n, d))
        values = rng.standard_normal((n, m))
        expected = _softmax(keys @ query / np.sqrt(d)) @ values
        got = as_array(soft_lookup(query, keys, values), "soft_lookup", (m,))
        assert np.allclose(got, expected, atol=1e-5), (
            f"d={d}, n={n}, m={m}: got {got}, expected {expected}. "
            "Did you divide the scores by sqrt(d) and normalize with softmax?"
        )
    print("Correct!")


def check_2(causal_weights):
    """causal_weights(Q (S, d), K (S, d)) -> (S, S), zero above the diagonal."""
    rng = np.random.default_rng(200)
    for S, d in ((1, 2), (3, 2), (7, 5)):
        Q = rng.standard_normal((S, d))
        K = rng.standard_normal((S, d))
        scores = Q @ K.T / np.sqrt(d)
        scores[np.triu_indices(S, k=1)] = -np.inf
        expected = _softmax(scores)
        got = as_array(causal_weights(Q, K), "causal_weights", (S, S))
        upper = got[np.triu_indices(S, k=1)]
        assert np.all(upper == 0), (
            f"S={S}: weights above the diagonal must be exactly 0, got {upper}"
        )
        assert np.allclose(got.sum(axis=1), 1, atol=1e-5), (
            f"S={S}: rows must sum to 1, got {got.sum(axis=1)}"
        )
        assert np.allclose(got, expected, atol=1e-5), (
            f"S={S}, d={d}: got\n{got}\nexpected\n{expected}"
        )
    print("Correct!")
