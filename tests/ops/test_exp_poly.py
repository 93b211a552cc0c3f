"""kernels/exp_poly.cl, the builtin-free exp of silu.cl and cross_entropy.cl,
against numpy's exp in float64: within 2 ulp over the whole float range."""

import numpy as np

from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor


def exp_poly(queue, x):
    x = Tensor.from_host(queue, np.ascontiguousarray(x, np.float32))
    y = Tensor.empty(queue, x.shape)
    launch(queue, "exp_poly", "exp_poly_forward", (x.size,), LOCAL_1D,
           x, y, x.size, options=("-DEXP_POLY_TEST",))
    return y.to_host()


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
