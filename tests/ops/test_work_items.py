"""Elementwise kernels split n values into contiguous runs over however many
work-items they are launched on (``core/tensor_ops.py: work_items``): about
n / 256 on a CPU, n on a GPU. Every split must give the same values, and
nothing may be written past n."""

import numpy as np
import pyopencl as cl
import pytest

import numpy_ref as ref
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.tensor_ops import CPU_RUN, work_items

N = 301
GUARD = 3   # values past n that must stay untouched


def _run(queue, program, kernel, items, inputs, n_out, *scalars):
    ins = [Tensor.from_host(queue, a) for a in inputs]
    outs = [Tensor.from_host(queue, np.full(N + GUARD, np.nan))
            for _ in range(n_out)]
    launch(queue, program, kernel, (items,), LOCAL_1D, *ins, *outs, *scalars)
    got = [o.to_host() for o in outs]
    for g in got:
        assert np.isnan(g[N:]).all(), "a value past n was written"
    return [g[:N] for g in got]


@pytest.mark.parametrize("items", [1, 3, 64, 200, N])
def test_every_split_gives_the_same_values(queue, rng, items):
    a, b, g = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    (out,) = _run(queue, "elementwise", "add_forward", items, [a, b], 1, N)
    np.testing.assert_array_equal(out, a + b)          # one float32 rounding
    (out,) = _run(queue, "elementwise", "mul_forward", items, [a, b], 1, N)
    np.testing.assert_array_equal(out, a * b)
    ga, gb = _run(queue, "elementwise", "mul_backward", items, [g, a, b], 2, N)
    np.testing.assert_array_equal(ga, g * b)
    np.testing.assert_array_equal(gb, g * a)
    (out,) = _run(queue, "elementwise", "scale_forward", items, [a], 1, -2.5, N)
    np.testing.assert_array_equal(out, np.float32(-2.5) * a)
    (out,) = _run(queue, "silu", "silu_forward", items, [a], 1, N)
    a64, g64 = a.astype(np.float64), g.astype(np.float64)
    np.testing.assert_allclose(out, ref.silu(a64), rtol=1e-5, atol=1e-6)
    (out,) = _run(queue, "silu", "silu_backward", items, [g, a], 1, N)
    np.testing.assert_allclose(out, ref.silu_vjp(a64, g64)[0], rtol=1e-5, atol=1e-6)


def test_work_items_per_device(queue):
    cpu = queue.device.type == cl.device_type.CPU
    assert work_items(queue, 0) == 0
    assert work_items(queue, 1) == 1
    want = -(-10_000 // CPU_RUN) if cpu else 10_000
    assert work_items(queue, 10_000) == want
