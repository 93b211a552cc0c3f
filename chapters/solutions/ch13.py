"""Reference answers for chapter 13's exercises."""

import math


def exercise_1(M, N, K):
    """matmul_intensity: 2 M N K FLOPs over 4 (M K + K N + M N) bytes."""
    return 2 * M * N * K / (4 * (M * K + K * N + M * N))


def exercise_2(ridge):
    """smallest_compute_bound_square: n^3 * 2 / (12 n^2) = n / 6 >= ridge."""
    return max(1, math.ceil(6 * ridge))


def exercise_3(kernels, peak, bandwidth):
    """roofline_time: each kernel waits for the slower of its two limits."""
    return sum(max(f / peak, b / bandwidth) for f, b in kernels)
