"""Input checks shared by every op. They run before any kernel, so a bad call
raises a ValueError that names the offending values and changes nothing."""

import numpy as np

from netcl_lite.autograd import as_node

FLOAT = np.dtype(np.float32)


def nodes(*xs, dtype=FLOAT, op="op"):
    """Wrap inputs as nodes; check they share one context and the dtype."""
    out = [as_node(x) for x in xs]
    context = out[0].value.context
    for i, node in enumerate(out):
        if node.value.context != context:
            raise ValueError(
                f"{op}: input {i} lives in another OpenCL context; "
                "create every tensor with the same device's queue"
            )
        if dtype is not None and node.dtype != dtype:
            raise ValueError(f"{op}: input {i} has dtype {node.dtype}, need {dtype}")
    return out


def same_shape(a, b, op):
    if a.shape != b.shape:
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} differ")


def min_ndim(x, n, op, what="input"):
    if len(x.shape) < n:
        raise ValueError(f"{op}: {what} needs at least {n} dims, got shape {x.shape}")
