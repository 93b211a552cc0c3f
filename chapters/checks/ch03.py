"""Checks for chapter 03: the 1/sqrt(d_k) factor. Each check_k(fn) runs your
function on fixed inputs and compares with values computed another way; it
prints "Correct!" or raises AssertionError with what differs."""

import numpy as np

from .common import as_number


def _gauss_tail_by_integration(threshold, d_k):
    """2 * integral of the N(0, d_k) density beyond threshold (midpoint rule)."""
    sigma = np.sqrt(d_k)
    edges = np.linspace(threshold, threshold + 40 * sigma, 400_001)
    mid = (edges[1:] + edges[:-1]) / 2
    pdf = np.exp(-mid**2 / (2 * d_k)) / np.sqrt(2 * np.pi * d_k)
    return 2 * float(np.sum(pdf * np.diff(edges)))


def check_1(gaussian_tail_share):
    """gaussian_tail_share(threshold, d_k) -> P(|s| > threshold), s ~ N(0, d_k)."""
    for threshold, d_k in ((35.0, 128), (0.0, 64), (1.0, 1), (10.0, 4), (3.0, 2)):
        expected = _gauss_tail_by_integration(threshold, d_k)
        got = as_number(gaussian_tail_share(threshold, d_k), "gaussian_tail_share")
        assert abs(got - expected) <= 1e-6 + 1e-4 * expected, (
            f"threshold={threshold}, d_k={d_k}: got {got:.6g}, expected "
            f"{expected:.6g}. Both tails count, and sigma is sqrt(d_k), not d_k."
        )
    print("Correct!")


def _softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def check_2(softmax_jacobian):
    """softmax_jacobian(z (n,)) -> (n, n), J[i, j] = d p_i / d z_j."""
    rng = np.random.default_rng(302)
    for z in (rng.standard_normal(4), rng.standard_normal(7) * 3,
              np.array([0.0]), np.array([1000.0, 999.0, 0.0])):
        n, h = len(z), 1e-6
        fd = np.empty((n, n))                      # central differences, column j
        for j in range(n):
            step = np.zeros(n)
            step[j] = h
            fd[:, j] = (_softmax(z + step) - _softmax(z - step)) / (2 * h)
        got = softmax_jacobian(z.copy())
        assert got is not None, "softmax_jacobian returned None: forgot `return`?"
        got = np.asarray(got, dtype=np.float64)
        assert got.shape == (n, n), f"shape {got.shape}, expected {(n, n)}"
        assert np.all(np.isfinite(got)), (
            f"non-finite entries for z = {z}: subtract max(z) before exp"
        )
        assert np.allclose(got, fd, atol=1e-6), (
            f"z = {np.round(z, 3)}: got\n{np.round(got, 5)}\n"
            f"finite differences give\n{np.round(fd, 5)}"
        )
    print("Correct!")


def check_3(unit_variance_scale):
    """unit_variance_scale(d_k, var_q, var_k) -> a with Var(a q.k) = 1."""
    for d_k, var_q, var_k in ((128, 1.0, 1.0), (64, 4.0, 1.0), (16, 0.5, 2.0),
                              (2, 0.1, 0.3)):
        a = as_number(unit_variance_scale(d_k, var_q, var_k), "unit_variance_scale")
        assert a > 0, f"the factor should be positive, got {a}"
        # Var(q.k) = d_k var_q var_k, so Var(a q.k) = a^2 d_k var_q var_k
        assert abs(a * a * d_k * var_q * var_k - 1) < 1e-9, (
            f"d_k={d_k}, var_q={var_q}, var_k={var_k}: a = {a:.6g} gives "
            f"Var(a q.k) = {a * a * d_k * var_q * var_k:.6g}, not 1"
        )
    # and the same on samples
    rng = np.random.default_rng(303)
    qs = rng.standard_normal((20_000, 32)) * np.sqrt(3.0)
    ks = rng.standard_normal((20_000, 32)) * np.sqrt(0.5)
    a = as_number(unit_variance_scale(32, 3.0, 0.5), "unit_variance_scale")
    v = float(np.var(a * np.sum(qs * ks, axis=1)))
    assert abs(v - 1) < 0.06, f"sampled Var(a q.k) = {v:.3f}, expected about 1"
    print("Correct!")
