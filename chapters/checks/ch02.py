"""Checks for chapter 02: the embedding table. Each check_k(fn) runs your
function on fixed inputs and compares with numpy; it prints "Correct!" or
raises AssertionError with what differs."""

import numpy as np


def check_1(table_bytes):
    """table_bytes(V, D, bytes_per_value) -> int."""
    cases = [((32_000, 2048, 4), 262_144_000), ((128_000, 8192, 2), 2_097_152_000),
             ((10, 3, 4), 120), ((1, 1, 2), 2)]
    for args, expected in cases:
        got = table_bytes(*args)
        assert got is not None, "table_bytes returned None: forgot `return`?"
        assert int(got) == got == expected, (
            f"table_bytes{args} = {got}, expected {expected} "
            "(V * D * bytes_per_value)"
        )
    print("Correct!")


def check_2(embedding_grad):
    """embedding_grad(ids (N,), grad_out (N, D), V) -> (V, D) scatter-add."""
    rng = np.random.default_rng(202)
    cases = [(np.array([3, 1, 3, 3]), 5, 4), (np.array([0]), 1, 3),
             (rng.integers(0, 7, 50), 7, 6), (np.array([2, 2]), 9, 2)]
    for ids, V, D in cases:
        grad_out = rng.standard_normal((len(ids), D))
        expected = np.zeros((V, D))
        np.add.at(expected, ids, grad_out)
        got = embedding_grad(ids.copy(), grad_out.copy(), V)
        assert got is not None, "embedding_grad returned None: forgot `return`?"
        got = np.asarray(got, dtype=np.float64)
        assert got.shape == (V, D), f"shape {got.shape}, expected {(V, D)}"
        assert np.allclose(got, expected, atol=1e-6), (
            f"ids {ids.tolist()[:10]}: got\n{got}\nexpected\n{expected}\n"
            "Do repeated ids accumulate? (grad[ids] += g keeps only one update)"
        )
    print("Correct!")


def check_3(one_hot):
    """one_hot(ids (N,), V) -> (N, V) with one_hot @ E == E[ids]."""
    rng = np.random.default_rng(203)
    for ids, V in ((np.array([142, 8931, 25]), 10_000), (np.array([3, 1, 3, 3]), 5),
                   (np.array([0]), 1)):
        got = one_hot(ids.copy(), V)
        assert got is not None, "one_hot returned None: forgot `return`?"
        got = np.asarray(got, dtype=np.float64)
        assert got.shape == (len(ids), V), (
            f"shape {got.shape}, expected {(len(ids), V)}"
        )
        E = rng.standard_normal((V, 3))
        assert np.allclose(got @ E, E[ids]), (
            f"one_hot(ids) @ E should equal E[ids] for ids {ids.tolist()}"
        )
        assert set(np.unique(got)) <= {0.0, 1.0} and np.all(got.sum(1) == 1), (
            "each row must hold a single 1 and zeros elsewhere"
        )
    print("Correct!")
