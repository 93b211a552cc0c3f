"""F.linear (x @ w^T, w stored (out, in)) against numpy, with every kernel
the shape can pick: the simple one (small), the few-rows one (M < 8, as a
decoding step) and the tiled one (packs w^T), under every tile."""

import numpy as np
import pytest

import netcl_lite.functional as F
from gradcheck import check_op
from tiles import each_tile  # noqa: F401 (a fixture: once per matmul tile)


def linear(x, w):
    return x @ w.T


def linear_vjp(x, w, g):
    gx = g @ w
    gw = g.reshape(-1, g.shape[-1]).T @ x.reshape(-1, x.shape[-1])
    return [gx, gw]


@pytest.mark.parametrize("sx,sw", [
    ((1, 1), (1, 1)), ((5, 7), (3, 7)), ((2, 3, 9), (13, 9)), ((4,), (6, 4)),
])
def test_linear_small(queue, rng, sx, sw):
    x, w = rng.standard_normal(sx), rng.standard_normal(sw)
    check_op(queue, F.linear, linear, linear_vjp, [x, w])


@pytest.mark.parametrize("sx", [(1, 1, 96), (2, 33, 96)])
def test_linear_fast_kernels(queue, rng, sx, each_tile):
    x, w = rng.standard_normal(sx), rng.standard_normal((200, 96))
    check_op(queue, F.linear, linear, linear_vjp, [x, w])


def test_linear_names_bad_shapes(queue):
    from netcl_lite.core.tensor import Tensor
    x = Tensor.from_host(queue, np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"K = x's last size 3.*\(3, 4\)"):
        F.linear(x, Tensor.from_host(queue, np.zeros((3, 4))))
