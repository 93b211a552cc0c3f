"""kernels/exp_poly.cl, the builtin-free exp of silu.cl and cross_entropy.cl,
against numpy's exp in float64: within 2 ulp over the whole float range."""

import numpy as np
import pyopencl as cl

from netcl_lite.core.program import kernel_source

SOURCE = kernel_source("exp_poly") + """
__kernel void run(__global const float *x, __global float *y, const int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = exp_poly(x[i]);
}
"""


def exp_poly(queue, x):
    x = np.ascontiguousarray(x, np.float32)
    prg = cl.Program(queue.context, SOURCE).build()
    mf = cl.mem_flags
    xb = cl.Buffer(queue.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    yb = cl.Buffer(queue.context, mf.WRITE_ONLY, x.nbytes)
    prg.run(queue, (x.size,), None, xb, yb, np.int32(x.size))
    y = np.empty_like(x)
    cl.enqueue_copy(queue, y, yb)
    return y


def test_within_two_ulp_of_exp(queue):
    x = np.linspace(-87, 88, 200_001, dtype=np.float32)
    got = exp_poly(queue, x).astype(np.float64)
    want = np.exp(x.astype(np.float64))
    ulp = np.spacing(want.astype(np.float32)).astype(np.float64)
    assert (np.abs(got - want) / ulp).max() <= 2


def test_edges(queue):
    x = np.array([0.0, -np.inf, np.inf, np.nan, -100.0, 100.0, 1.0], np.float32)
    got = exp_poly(queue, x)
    assert got[0] == 1.0 and got[1] == 0.0 and got[2] == np.inf
    assert np.isnan(got[3]) and got[4] == 0.0 and got[5] == np.inf
    assert abs(got[6] - np.e) <= np.spacing(np.float32(np.e))
