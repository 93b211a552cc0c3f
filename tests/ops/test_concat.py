"""F.concat against numpy: forward, gradient (the split) and finite
differences, on several axes; bad shapes fail before any kernel."""

import numpy as np
import pytest

import netcl_lite.functional as F
from gradcheck import check_op
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor


def concat_vjp(a, b, axis, g):
    """The gradient of concatenate: g split at a's size along axis."""
    return np.split(g, [a.shape[axis]], axis=axis)


@pytest.mark.parametrize("shape_a,shape_b,axis", [
    ((3,), (2,), 0),
    ((2, 3), (2, 5), 1),
    ((2, 3), (4, 3), 0),
    ((2, 3, 4, 5), (2, 3, 1, 5), 2),       # the KV-cache's axis: positions
    ((2, 3, 4, 5), (2, 3, 4, 2), -1),
])
def test_concat_gradcheck(queue, rng, shape_a, shape_b, axis):
    check_op(queue, lambda a, b: F.concat(a, b, axis=axis),
             lambda a, b: np.concatenate([a, b], axis=axis),
             lambda a, b, g: concat_vjp(a, b, axis, g),
             [rng.standard_normal(shape_a), rng.standard_normal(shape_b)])


def test_concat_forward_and_backward_kernels(queue):
    a = Tensor.from_host(queue, np.ones((2, 2)))
    with trace() as ran:
        out = F.concat(a, a, axis=0)
    assert ran == ["concat.cl:concat_forward"]
    assert out.shape == (4, 2) and out.op == "concat"


def test_concat_errors_name_the_shapes(queue):
    a = Tensor.from_host(queue, np.zeros((2, 3)))
    b = Tensor.from_host(queue, np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"\(2, 3\) and b \(3, 4\).*axis 1"):
        F.concat(a, b, axis=1)
    with pytest.raises(ValueError, match=r"axis must be an int in \[-2, 1\] .*got 2"):
        F.concat(a, a, axis=2)
    with pytest.raises(ValueError, match="match except"):
        F.concat(a, Tensor.from_host(queue, np.zeros(3)), axis=0)
