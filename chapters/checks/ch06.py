"""Checks for chapter 06, rotary position embeddings: ``check_k(your_function)``.

Each check runs your function on a few inputs, compares the result with an
independent computation (numpy, or the library's ``F.rope`` kernel) and raises
an AssertionError that says what differs. It prints "Correct!" when all agree.
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


# (R, S, d, base) of check_4: one pair; odd counts of pairs (d = 6); 2 x 5 x 4
# = 40 pairs and 3 x 7 x 3 = 63, so that most of the 64 work-items, or one,
# are padding; 48 positions of 64 values (theta_i spans 1 .. 1e-4); a small
# base, so that a base left out shows
ROPE_SHAPES = ((1, 1, 2, 10000.0), (2, 5, 8, 10000.0), (3, 7, 6, 500.0),
               (2, 48, 64, 10000.0))
ROPE_TIMED = (16, 256, 64)   # check_4's timing: (R, S, d), 1 MB in and out


def _rope64(x, base):
    """Float64 RoPE of (R, S, d) rows at positions 0 .. S-1."""
    R, S, d = x.shape
    theta = base ** (-2.0 * np.arange(d // 2) / d)          # (d/2,)
    angle = np.arange(S)[:, None] * theta[None, :]          # (S, d/2)
    c, s = np.cos(angle), np.sin(angle)
    x = x.astype(np.float64)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * c - x[..., 1::2] * s
    out[..., 1::2] = x[..., 0::2] * s + x[..., 1::2] * c
    return out


def check_4(path="exercises/ch06_rope.cl", time=True):
    """Your rope_rotate kernel (in the file at ``path``) against float64
    numpy on the shapes of ROPE_SHAPES; then, with ``time``, its device time
    against F.rope's on a (16, 256, 64) input. Returns the time ratio
    (yours / the library's), or None without ``time``."""
    rng = np.random.default_rng(64)
    for R, S, d, base in ROPE_SHAPES:
        x = rng.standard_normal((R * S, d)).astype(np.float32)
        pairs = R * S * d // 2
        ran = run_kernel_file(path, "rope_rotate", (pairs,),
                              dict(x=x, out=np.full_like(x, np.nan), rows=R * S,
                                   S=S, d=d, base=base))
        want = _rope64(x.reshape(R, S, d), base).reshape(R * S, d)
        hints = {row: f"Row {row} sits at position m = {row} % {S} = "
                      f"{row % S}: pair i turns by {row % S} * {base:g}^(-2i/{d})"
                      if row % S else f"Row {row} sits at position 0: every "
                      "angle is 0 there, so out = x" for row in range(R * S)}
        try:
            # float32 angles are off by up to ~m * 6e-8 rad: 3e-6 at m = 47
            assert_close(ran["out"], want, "out", rtol=1e-4, atol=1e-5,
                         hints=hints)
        except AssertionError as err:
            raise AssertionError(f"rope_rotate on {R} x {S} rows of d = {d}, "
                                 f"base {base:g}: {err}") from None
    print(f"Correct: {len(ROPE_SHAPES)} shapes agree with float64 numpy.")
    return _rope_time(path) if time else None


def _rope_time(path):
    """Best device time of your kernel and of F.rope, three rounds. F.rope
    computes its (cos, sin) table once and keeps it, so its time is the
    rotation alone."""
    R, S, d = ROPE_TIMED
    x = np.random.default_rng(65).standard_normal((R, S, d)).astype(np.float32)
    timing = profiling_queue(manager.default("auto").queue)
    x_device = Tensor.from_host(timing, x)
    mine, rounds = np.inf, []
    for _ in range(3):               # interleaved: load affects both alike
        ran = run_kernel_file(path, "rope_rotate", (R * S * d // 2,),
                              dict(x=x, out=np.empty_like(x), rows=R * S, S=S,
                                   d=d, base=10000.0),
                              queue=timing, repeat=3)   # ~0.1 s a launch
        mine = min(mine, ran.seconds)
        rounds.append(profile(timing, lambda: F.rope(x_device), steps=5))
    return kernel_time("rope_rotate", mine, rounds,
                       f"x of shape ({R}, {S}, {d})")
