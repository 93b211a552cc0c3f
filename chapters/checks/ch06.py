"""Checks for chapter 06, rotary position embeddings: ``check_k(your_function)``.

Each check runs your function on a few inputs, compares the result with an
independent computation (numpy, or the library's ``F.rope`` kernel) and raises
an AssertionError that says what differs. It prints "Correct!" when all agree.
"""

import numpy as np

import netcl_lite.functional as F
from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor

from .common import as_array


def _rope_device(x, base, offset):
    q = manager.default("auto").queue
    out = F.rope(Tensor.from_host(q, x), base=base, offset=offset)
    return out.value.to_host().astype(np.float64)


def check_1(rope_reference):
    """rope_reference(x, base, offset) == F.rope for (S, d) inputs."""
    rng = np.random.default_rng(6)
    for S, d, base, offset in ((3, 2, 10000.0, 0), (4, 8, 10000.0, 5),
                               (5, 16, 500.0, 1000), (2, 64, 10000.0, 4000)):
        x = rng.standard_normal((S, d))
        got = as_array(rope_reference(x.copy(), base=base, offset=offset),
                     "rope_reference")
        want = _rope_device(x, base, offset)
        assert got.shape == want.shape, (
            f"rope_reference returned shape {got.shape}, want {want.shape}"
        )
        assert np.allclose(got, want, atol=1e-4), (
            f"rope_reference(d={d}, base={base}, offset={offset}) differs from "
            f"F.rope by up to {np.abs(got - want).max():.3g}. Row s sits at "
            f"position offset + s; pair i is (x[2i], x[2i+1]) and turns by "
            f"m * base**(-2i/d)."
        )
    print("Correct!")


def check_2(rope_wavelengths):
    """2 pi / theta_i for i = 0 .. d/2 - 1."""
    for d, base in ((2, 10000.0), (8, 10000.0), (128, 10000.0), (64, 500000.0)):
        got = as_array(rope_wavelengths(d, base=base), "rope_wavelengths")
        i = np.arange(d // 2)
        want = 2 * np.pi / base ** (-2.0 * i / d)
        assert got.shape == want.shape, (
            f"rope_wavelengths({d}) has shape {got.shape}, want ({d // 2},): "
            "one wavelength per pair"
        )
        assert np.allclose(got, want, rtol=1e-9), (
            f"rope_wavelengths({d}, base={base}) = {got[:3]}..., want "
            f"{want[:3]}...: theta_i = base**(-2i/d), wavelength 2 pi / theta_i"
        )
    print("Correct!")


def check_3(relative_score):
    """relative_score(q, k, distance) == F.rope(q, m) . F.rope(k, m + distance)."""
    rng = np.random.default_rng(7)
    for d, distance, base in ((2, 3, 10000.0), (8, 1, 10000.0),
                              (64, 3, 10000.0), (16, 7, 100.0)):
        qv, kv = rng.standard_normal(d), rng.standard_normal(d)
        got = as_array(relative_score(qv.copy(), kv.copy(), distance, base=base),
                     "relative_score")
        assert got.size == 1, f"relative_score must return one number, got {got}"
        got = float(got.reshape(()))
        for m in (0, 17, 1234):
            a = _rope_device(qv[None, :], base, m)[0]
            b = _rope_device(kv[None, :], base, m + distance)[0]
            want = float(a @ b)
            assert np.isclose(got, want, rtol=1e-4, atol=1e-4), (
                f"relative_score(d={d}, distance={distance}, base={base}) = {got}, "
                f"but F.rope at positions ({m}, {m + distance}) gives {want}"
            )
    print("Correct!")
