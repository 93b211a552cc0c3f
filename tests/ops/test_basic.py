import numpy as np
import pytest

import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op


@pytest.mark.parametrize("shape", [(1,), (37,), (3, 5), (2, 3, 7), (257,), (3, 5477)])
def test_add_mul(queue, rng, shape):
    a, b = rng.standard_normal(shape), rng.standard_normal(shape)
    check_op(queue, F.add, ref.add, ref.add_vjp, [a, b])
    check_op(queue, F.mul, ref.mul, ref.mul_vjp, [a, b])


def test_scale_and_sum(queue, rng):
    x = rng.standard_normal((4, 37))
    check_op(queue, lambda t: F.scale(t, -2.5), lambda t: -2.5 * t,
             lambda t, g: [-2.5 * g], [x])
    check_op(queue, lambda t: F.sum(t), lambda t: np.array(t.sum()),
             lambda t, g: [np.full(t.shape, float(g))], [x])


@pytest.mark.parametrize("sa,sb", [
    ((1, 1), (1, 1)), ((5, 7), (7, 3)), ((2, 37, 9), (2, 9, 13)),
    ((2, 3, 4, 5), (2, 3, 5, 6)), ((2, 6, 8), (8, 11)),
])
def test_matmul(queue, rng, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    check_op(queue, F.matmul, ref.matmul, ref.matmul_vjp, [a, b])


def test_matmul_errors_name_the_sizes(queue):
    from netcl_lite.core.tensor import Tensor
    a = Tensor.from_host(queue, np.zeros((2, 3)))
    b = Tensor.from_host(queue, np.zeros((4, 5)))
    with pytest.raises(ValueError, match=r"K=3.*K=4"):
        F.matmul(a, b)
    with pytest.raises(ValueError, match="dtype int32"):
        F.add(Tensor.from_host(queue, np.zeros(3, np.int32)),
              Tensor.from_host(queue, np.zeros(3, np.int32)))
