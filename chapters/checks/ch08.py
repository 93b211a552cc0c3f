"""Checks for chapter 08, toward FlashAttention: ``check_k(your_function)``.

Each check runs your function on a few inputs, compares the result with an
independent computation (plain arithmetic, brute force, or the library's
kernels) and raises an AssertionError that says what differs. It prints
"Correct!" when all agree.
"""

import math

import numpy as np

import netcl_lite.functional as F
from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor


def check_1(scores_bytes):
    """scores_bytes(S, heads, batch, bytes_per_value) == S*S*heads*batch*bytes."""
    cases = [(8192, 1, 1, 4), (8192, 32, 8, 4), (4096, 8, 2, 2), (3, 1, 1, 4),
             (1000, 12, 3, 8)]
    for S, heads, batch, nbytes in cases:
        want = S * S * heads * batch * nbytes
        got = scores_bytes(S, heads, batch, nbytes)
        assert got is not None, "scores_bytes returned None: did you forget `return`?"
        assert got == want, (
            f"scores_bytes({S}, {heads}, {batch}, {nbytes}) = {got!r}, want {want} "
            f"({S} x {S} values per head and sequence, {nbytes} bytes each)"
        )
    assert scores_bytes(8192, 1, 1) == 256 * 2**20, (
        "with the default bytes_per_value (4, float32), S = 8192 must give 256 MiB"
    )
    print("Correct!")


def _run_online(online_update, s, V, block):
    m, l, acc = -math.inf, 0.0, np.zeros(V.shape[1])
    for start in range(0, len(s), block):
        result = online_update(m, l, acc, s[start:start + block],
                               V[start:start + block])
        assert result is not None, (
            "online_update returned None: return the tuple (m, l, acc)"
        )
        try:
            m, l, acc = result
        except (TypeError, ValueError) as err:
            raise AssertionError(
                f"online_update must return (m, l, acc), got {result!r}"
            ) from err
        acc = np.asarray(acc, dtype=np.float64)
    return float(m), float(l), acc


def check_2(online_update):
    """m, l and acc / l after the last block == F.scaled_dot_product_attention."""
    q = manager.default("auto").queue
    rng = np.random.default_rng(8)
    for N, d, dv, block in ((9, 4, 3, 2), (16, 8, 5, 5), (7, 3, 2, 7), (12, 4, 4, 1)):
        qrow = 2 * rng.standard_normal((1, d))
        K = 2 * rng.standard_normal((N, d))
        V = rng.standard_normal((N, dv))
        # make a later block hold the maximum, so the rescaling matters
        K[-1] = 3 * qrow[0] / np.linalg.norm(qrow[0])
        s = (K @ qrow[0]) / math.sqrt(d)                      # (N,)
        m, l, acc = _run_online(online_update, s, V, block)
        want = F.scaled_dot_product_attention(
            Tensor.from_host(q, qrow), Tensor.from_host(q, K),
            Tensor.from_host(q, V), causal=False).value.to_host()[0]
        assert abs(m - s.max()) < 1e-12, (
            f"after the last block m should be the largest score {s.max():.6f}, "
            f"got {m:.6f}"
        )
        want_l = float(np.exp(s - s.max()).sum())
        assert abs(l - want_l) < 1e-9 * want_l, (
            f"after the last block l should be sum(exp(s - max s)) = {want_l:.6f}, "
            f"got {l:.6f}: did you rescale l by exp(m_old - m_new)?"
        )
        got = acc / l
        assert got.shape == want.shape and np.allclose(got, want, atol=1e-5), (
            f"N={N}, block={block}: acc / l = {np.round(got, 5)} but the kernels "
            f"give {np.round(want, 5)}: did you rescale acc by exp(m_old - m_new)?"
        )
    print("Correct!")


def check_3(causal_tiles):
    """causal_tiles(S, block) == the tiles with a visible pair, by brute force."""
    for S, block in ((8, 4), (10, 4), (1, 64), (100, 64), (1000, 64), (257, 16),
                     (64, 64), (65, 64)):
        T = -(-S // block)
        want = 0
        for qi in range(T):
            for kj in range(T):
                first_key = kj * block
                last_query = min((qi + 1) * block, S) - 1
                want += first_key <= last_query  # some pair with j <= i
        got = causal_tiles(S, block)
        assert got is not None, "causal_tiles returned None: did you forget `return`?"
        assert got == want, (
            f"causal_tiles({S}, {block}) = {got!r}, want {want} "
            f"(of {T * T} tiles in all)"
        )
    print("Correct!")
