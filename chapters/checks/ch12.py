"""Checks for chapter 12, RoPE beyond the training length:
``check_k(your_function)``.

Each check runs your function on a few inputs, compares the result with an
independent computation (numpy, or the library's RoPE kernel) and raises an
AssertionError that says what differs. It prints "Correct!" when all agree.
"""

import math

import numpy as np

import netcl_lite.functional as F
from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor

from .common import as_array, as_number


def check_1(ntk_base):
    """ntk_base(base, scale, head_dim) -> the rescaled base."""
    got = as_number(ntk_base(10000.0, 4.0, 2 * 16), "ntk_base")
    want = 10000.0 * 4.0 ** (32 / 30)
    assert math.isclose(got, want, rel_tol=1e-9), (
        f"base 10000, scale 4, head_dim 32: got {got:.1f}, want {want:.1f} "
        "(base * scale ** (d / (d - 2)))"
    )
    for base, scale, d in ((10000.0, 2.0, 64), (500.0, 8.0, 16), (1e4, 1.0, 8)):
        b = as_number(ntk_base(base, scale, d), "ntk_base")
        slow_old = base ** (-(d - 2) / d)               # the slowest pair
        slow_new = b ** (-(d - 2) / d)
        assert math.isclose(slow_old / slow_new, scale, rel_tol=1e-9), (
            f"base {base}, scale {scale}, d {d}: the slowest pair turns "
            f"{slow_old / slow_new:.4f} times slower, want {scale}"
        )
    print("Correct!")


def check_2(rope_angles):
    """rope_angles(n, d, base, scale) -> (n, d/2) angles, as F.rope turns."""
    got = as_array(rope_angles(3, 4, 100.0, 1.0), "rope_angles", (3, 2))
    want = np.array([[0, 0], [1, 0.1], [2, 0.2]])
    assert np.allclose(got, want), (
        f"n=3, d=4, base 100: got\n{got}\nwant\n{want}\n"
        "(theta_i = base ** (-2i / d); angle = scale * m * theta_i)"
    )
    q = manager.default("auto").queue
    for n, d, base, scale in ((40, 16, 10000.0, 0.25), (9, 8, 500.0, 1.0),
                              (12, 32, 43_000.0, 0.5)):
        x = np.zeros((n, d))
        x[:, 0::2] = 1.0                               # every pair is (1, 0)
        out = F.rope(Tensor.from_host(q, x), base=base, scale=scale).value.to_host()
        angle = np.arctan2(out[:, 1::2], out[:, 0::2])  # the kernel's angles
        got = as_array(rope_angles(n, d, base, scale), "rope_angles", (n, d // 2))
        wrapped = np.angle(np.exp(1j * got))            # into (-pi, pi]
        diff = np.abs(np.angle(np.exp(1j * (wrapped - angle))))
        assert diff.max() < 1e-4, (
            f"n={n}, d={d}, base={base}, scale={scale}: your angles differ from "
            f"F.rope's by up to {diff.max():.3g} rad"
        )
    print("Correct!")


def check_3(cross_entropy_per_position):
    """cross_entropy_per_position(logits (B, T, V), targets (B, T)) -> (T,)."""
    logits = np.log(np.array([[[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]]))  # (1, 2, 3)
    got = as_array(cross_entropy_per_position(logits, np.array([[0, 2]])),
                   "cross_entropy_per_position", (2,))
    want = -np.log([0.5, 0.8])
    assert np.allclose(got, want), f"by hand: got {got}, want {want}"
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((4, 6, 11)) * 3 + 1000.0   # large: overflow?
    targets = rng.integers(0, 11, (4, 6))
    z = logits - logits.max(-1, keepdims=True)
    lp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    want = -np.take_along_axis(lp, targets[..., None], -1)[..., 0].mean(0)
    got = as_array(cross_entropy_per_position(logits, targets),
                   "cross_entropy_per_position", (6,))
    assert np.all(np.isfinite(got)), (
        f"logits near 1000 gave {got}: subtract each row's max before exp"
    )
    assert np.allclose(got, want, atol=1e-9), f"random: got {got}, want {want}"
    print("Correct!")
