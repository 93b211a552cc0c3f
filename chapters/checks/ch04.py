"""Checks for chapter 04, causal attention by hand: ``check_k(your_function)``.

Each check runs your function on a few inputs, compares the result with an
independent computation (numpy, or the library's kernels) and raises an
AssertionError that says what differs. It prints "Correct!" when all agree.
``check_4(path)`` takes an OpenCL C file instead: it builds the kernel in it
(``run_kernel_file``), runs it and compares it with float64 numpy.
"""

import numpy as np

import netcl_lite.functional as F
from netcl_lite.core.device import manager
from netcl_lite.core.kernel_file import run_kernel_file
from netcl_lite.core.roofline import profile, profiling_queue
from netcl_lite.core.tensor import Tensor

from .common import as_array, assert_close, kernel_time

DOC_Q = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
DOC_K = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
DOC_V = np.array([[10.0, 1.0], [20.0, 2.0], [30.0, 3.0]])


def _library_attention(Q, K, V, causal):
    """O from the library's kernels (float32 on the default device)."""
    q = manager.default("auto").queue
    out = F.scaled_dot_product_attention(
        Tensor.from_host(q, Q), Tensor.from_host(q, K), Tensor.from_host(q, V),
        causal=causal,
    )
    return out.value.to_host().astype(np.float64)


def check_1(causal_mask):
    """causal_mask(S): (S, S) with 0 on/below the diagonal, -inf above."""
    for S in (1, 3, 5):
        M = as_array(causal_mask(S), "causal_mask")
        assert M.shape == (S, S), f"causal_mask({S}) has shape {M.shape}, want {(S, S)}"
        upper = np.triu(np.ones((S, S), dtype=bool), k=1)
        assert np.all(M[~upper] == 0.0), (
            f"causal_mask({S}) must be 0 where j <= i (a token sees itself and "
            f"the past), got\n{M}"
        )
        assert np.all(np.isneginf(M[upper])), (
            f"causal_mask({S}) must be -inf where j > i (the future), got\n{M}"
        )
    print("Correct!")


def check_2(attention):
    """attention(Q, K, V, causal) in float64 numpy == the library's kernels."""
    rng = np.random.default_rng(4)
    cases = [(DOC_Q, DOC_K, DOC_V, True)]
    for S, d, dv, causal in ((4, 3, 2, True), (5, 4, 3, False), (6, 8, 8, True)):
        cases.append((rng.standard_normal((S, d)), rng.standard_normal((S, d)),
                      rng.standard_normal((S, dv)), causal))
    for Q, K, V, causal in cases:
        got = as_array(attention(Q, K, V, causal=causal), "attention")
        want = _library_attention(Q, K, V, causal)
        assert got.shape == want.shape, (
            f"attention returned shape {got.shape}, want {want.shape} (S, d_v)"
        )
        assert np.allclose(got, want, atol=1e-4), (
            f"attention(causal={causal}) differs from the kernels for S={len(Q)}:\n"
            f"yours\n{got}\nkernels\n{want}"
        )
    print("Correct!")


def check_3(new_token_output):
    """The fourth token's output row: it sees all four keys."""
    rng = np.random.default_rng(5)
    cases = [(DOC_Q, DOC_K, DOC_V, np.array([2.0, 0.0]), np.array([1.0, -1.0]),
              np.array([40.0, 4.0]))]
    for d, dv in ((3, 2), (4, 5)):
        cases.append((rng.standard_normal((3, d)), rng.standard_normal((3, d)),
                      rng.standard_normal((3, dv)), rng.standard_normal(d),
                      rng.standard_normal(d), rng.standard_normal(dv)))
    for Q, K, V, qn, kn, vn in cases:
        got = as_array(new_token_output(Q, K, V, qn, kn, vn), "new_token_output")
        K4, V4 = np.vstack([K, kn]), np.vstack([V, vn])
        logits = K4 @ qn / np.sqrt(len(qn))          # the new row sees 4 keys
        w = np.exp(logits - logits.max())
        want = (w / w.sum()) @ V4
        assert got.shape == want.shape, (
            f"new_token_output returned shape {got.shape}, want {want.shape} (d_v,)"
        )
        assert np.allclose(got, want, atol=1e-4), (
            f"new_token_output gave {got}, want {want}: the new query must "
            "attend to all four keys (its own included)"
        )
    print("Correct!")


# (R, C) of check_4: a single value; odd sizes; 70 rows, so that 58 of the
# 128 work-items (two groups of 64) are padding; rows longer than a group
SOFTMAX_SHAPES = ((1, 1), (3, 5), (13, 37), (70, 8), (2, 300))
SOFTMAX_TIMED = (4096, 512)     # check_4's timing: 8 MB in, 8 MB out


def _softmax_rows(R, C, rng):
    """(R, C) logits in float32: random rows, and among them a row of large
    logits (exp overflows float32 without the max subtracted) and a row
    with masked (-inf) keys, as chapter 04's causal mask makes."""
    x = 3 * rng.standard_normal((R, C))
    if R > 1:
        x[1] += 200.0                          # exp(200) > float32's max
    if R > 2 and C > 1:
        x[2, 1::2] = -np.inf                   # masked keys weigh 0
    return x.astype(np.float32)


SOFTMAX_HINTS = {
    1: "Row 1 holds logits near 200: exp(200) overflows float32, so "
       "subtract the row's largest value first",
    2: "Row 2 has -inf at its odd columns (masked keys): they weigh 0",
}


def _softmax64(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def check_4(path="exercises/ch04_row_softmax.cl", time=True):
    """Your row_softmax kernel (in the file at ``path``) against float64
    numpy on the shapes of SOFTMAX_SHAPES; then, with ``time``, its device
    time against F.softmax's on SOFTMAX_TIMED rows. Returns the time
    ratio (yours / the library's), or None without ``time``."""
    rng = np.random.default_rng(44)
    for R, C in SOFTMAX_SHAPES:
        x = _softmax_rows(R, C, rng)
        ran = run_kernel_file(path, "row_softmax", (R,),
                              dict(x=x, y=np.full((R, C), np.nan), R=R, C=C))
        try:
            assert_close(ran["y"], _softmax64(x), "y", rtol=1e-4, atol=1e-6,
                         hints=SOFTMAX_HINTS)
        except AssertionError as err:
            raise AssertionError(f"row_softmax on x of shape ({R}, {C}): "
                                 f"{err}") from None
    print(f"Correct: {len(SOFTMAX_SHAPES)} shapes agree with float64 numpy.")
    return _softmax_time(path) if time else None


def _softmax_time(path):
    """Best device time of your kernel and of F.softmax, three rounds."""
    R, C = SOFTMAX_TIMED
    x = np.random.default_rng(45).standard_normal((R, C)).astype(np.float32)
    timing = profiling_queue(manager.default("auto").queue)
    x_device = Tensor.from_host(timing, x)
    mine, rounds = np.inf, []
    for _ in range(3):               # interleaved: load affects both alike
        ran = run_kernel_file(path, "row_softmax", (R,),
                              dict(x=x, y=np.empty_like(x), R=R, C=C),
                              queue=timing, repeat=5)
        mine = min(mine, ran.seconds)
        rounds.append(profile(timing, lambda: F.softmax(x_device), steps=5))
    return kernel_time("row_softmax", mine, rounds, f"{R} rows of {C}")
