"""Checks for chapter 13, your machine's roofline: ``check_k(your_function)``.

Each check runs your function on a few inputs, compares the result with an
independent computation (the library's counts in ``roofline.work``, or a
brute-force search) and raises an AssertionError that says what differs. It
prints "Correct!" when all agree.
"""

import math

from netcl_lite.core import roofline

from .common import as_number


def check_1(matmul_intensity):
    """matmul_intensity(M, N, K) -> FLOPs per byte of a float32 product."""
    got = as_number(matmul_intensity(1, 1, 1), "matmul_intensity")
    assert math.isclose(got, 2 / 12), (
        f"(1 x 1) @ (1 x 1): got {got}, want 2 FLOPs / 12 bytes = {2 / 12:.4f}")
    for M, N, K in ((2048, 352, 128), (2048, 128, 352), (1, 1024, 128),
                    (64, 64, 64), (128, 2048, 64)):
        flops, nbytes = roofline.work("matmul_tiled",
                                      dict(batch=1, M=M, N=N, K=K, b_bs=0))
        got = as_number(matmul_intensity(M, N, K), "matmul_intensity")
        assert math.isclose(got, flops / nbytes, rel_tol=1e-9), (
            f"M={M}, N={N}, K={K}: got {got:.4f}, want {flops / nbytes:.4f} "
            "(2 M N K FLOPs over 4 (M K + K N + M N) bytes)")
    print("Correct!")


def check_2(smallest_compute_bound_square):
    """smallest_compute_bound_square(ridge) -> the least n with n / 6 >= ridge."""
    def intensity(n):
        flops, nbytes = roofline.work("matmul_tiled",
                                      dict(batch=1, M=n, N=n, K=n, b_bs=0))
        return flops / nbytes

    for ridge in (0.1, 1.0, 5.0, 7.3, 12.0, 40.0):
        want = next(n for n in range(1, 10_000) if intensity(n) >= ridge)
        got = as_number(smallest_compute_bound_square(ridge),
                        "smallest_compute_bound_square")
        assert got == want, (
            f"ridge {ridge}: got n = {got:g}, want {want} (n = {want} gives "
            f"{intensity(want):.3f} FLOP/byte, n = {want - 1} gives "
            f"{intensity(want - 1):.3f})")
    print("Correct!")


def check_3(roofline_time):
    """roofline_time([(flops, bytes), ...], peak, bandwidth) -> seconds."""
    got = as_number(roofline_time([(100.0, 10.0)], 10.0, 2.0), "roofline_time")
    assert math.isclose(got, 10.0), (
        f"100 FLOPs on 10 bytes at 10 FLOP/s and 2 B/s: got {got}, want 10 s "
        "(the arithmetic, 100 / 10, outlasts the traffic, 10 / 2)")
    got = as_number(roofline_time([(100.0, 10.0), (0, 50.0), (6.0, 1.0)],
                                  10.0, 2.0), "roofline_time")
    want = 10.0 + 25.0 + 0.6
    assert math.isclose(got, want), (
        f"three kernels: got {got}, want {want} = 10 + 25 + 0.6 "
        "(each kernel's max(F / P, Q / B), summed)")
    assert as_number(roofline_time([], 1.0, 1.0), "roofline_time") == 0.0, (
        "no kernels take no time")
    print("Correct!")
