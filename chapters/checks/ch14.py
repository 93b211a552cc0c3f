"""Checks for chapter 14, a real model: ``check_k(your_function)``.

Each check runs your function on small random inputs, compares the result
with an independent computation (numpy, or the library's interleaved
``F.rope`` kernel) and raises an AssertionError that says what differs. It
prints "Correct!" when all agree. None of them needs the model file.
"""

import numpy as np

import netcl_lite.functional as F
from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor

from .common import as_array, as_number, assert_close


def check_1(prefix_matching_score):
    """prefix_matching_score(pattern (B, H, 2L, 2L), L) -> (H,)."""
    rng = np.random.default_rng(14)
    for B, H, L in ((1, 1, 2), (3, 4, 5), (2, 9, 12)):
        S = 2 * L
        raw = rng.random((B, H, S, S)) * np.tril(np.ones((S, S)))  # causal
        pattern = raw / raw.sum(-1, keepdims=True)                 # rows sum to 1
        want = np.zeros(H)
        for b in range(B):
            for i in range(L, S):
                want += pattern[b, :, i, i - L + 1]
        want /= B * L
        got = as_array(prefix_matching_score(pattern.copy(), L),
                       "prefix_matching_score", shape=(H,))
        assert_close(got, want, f"prefix_matching_score (B={B}, H={H}, L={L})",
                     atol=1e-9, hints={0: "a query at i >= L reads key i - L + 1, "
                                          "the token after its first occurrence; "
                                          "average over rows and the L queries"})
    print("Correct!")


def _rotate_half(x, base):
    """(S, d): pair (x[i], x[i + d/2]) at position s turned by s * theta_i."""
    S, d = x.shape
    angle = np.arange(S)[:, None] * base ** (-np.arange(0, d, 2) / d)
    a, b = x[:, :d // 2], x[:, d // 2:]
    return np.concatenate([a * np.cos(angle) - b * np.sin(angle),
                           a * np.sin(angle) + b * np.cos(angle)], axis=1)


def _rope_interleaved(x, base):
    """The library's kernel, pairs (x[2i], x[2i+1])."""
    queue = manager.default("auto").queue
    out = F.rope(Tensor.from_host(queue, x.astype(np.float32)), base=base)
    return out.value.to_host().astype(np.float64)


def check_2(to_interleaved):
    """to_interleaved(w (H * hd, D), hd): rotate-half rows -> interleaved."""
    rng = np.random.default_rng(15)
    for H, hd, D, S in ((1, 2, 3, 4), (2, 8, 16, 6), (3, 16, 24, 9)):
        x = rng.standard_normal((S, D))
        wq, wk = rng.standard_normal((2, H * hd, D)) / np.sqrt(D)
        gq = as_array(to_interleaved(wq.copy(), hd), "to_interleaved",
                      shape=wq.shape)
        gk = as_array(to_interleaved(wk.copy(), hd), "to_interleaved",
                      shape=wk.shape)
        assert sorted(map(tuple, gq.round(12))) == sorted(map(tuple, wq.round(12))), (
            "to_interleaved must only reorder rows, not change them")
        for h in range(H):
            rows = slice(h * hd, (h + 1) * hd)
            want = (_rotate_half(x @ wq[rows].T, 100.0)
                    @ _rotate_half(x @ wk[rows].T, 100.0).T)       # (S, S)
            got = (_rope_interleaved(x @ gq[rows].T, 100.0)
                   @ _rope_interleaved(x @ gk[rows].T, 100.0).T)
            assert_close(got, want, f"scores of head {h} (H={H}, hd={hd})",
                         atol=1e-4, hints={0: "within each head, row 2i takes "
                                              "row i and row 2i+1 takes row "
                                              "i + hd/2"})
    print("Correct!")


def check_3(copying_score):
    """copying_score(W_V, W_O, E, U) == sum(lambda) / sum(|lambda|) of E W_V W_O U."""
    rng = np.random.default_rng(16)
    for n, D, hd in ((6, 4, 2), (40, 16, 4), (120, 24, 8)):
        E = rng.standard_normal((n, D))
        W_V, W_O = rng.standard_normal((D, hd)), rng.standard_normal((hd, D))
        for U, kind in ((rng.standard_normal((D, n)), "random"),
                        (E.T.copy(), "tied (U = E^T)")):
            lam = np.linalg.eigvals(E @ W_V @ W_O @ U)             # (n,)
            want = lam.real.sum() / np.abs(lam).sum()
            got = as_number(copying_score(W_V, W_O, E, U), "copying_score")
            assert abs(got - want) < 1e-6, (
                f"n={n}, D={D}, hd={hd}, {kind} U: got {got:.6f}, want "
                f"{want:.6f} from the {n} x {n} circuit's eigenvalues. The "
                f"nonzero eigenvalues of (E W_V)(W_O U) are those of "
                f"(W_O U)(E W_V), an hd x hd matrix")
    for W_V, W_O in ((np.eye(3), np.eye(3)), (np.eye(3), -np.eye(3))):
        got = as_number(copying_score(W_V, W_O, np.eye(3), np.eye(3)),
                        "copying_score")
        want = float(np.sign(W_O[0, 0]))
        assert abs(got - want) < 1e-9, (
            f"an identity circuit copies perfectly: want {want:+.0f}, got {got}")
    print("Correct!")
