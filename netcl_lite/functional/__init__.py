"""The differentiable ops. Each takes and returns autograd nodes, runs a
forward kernel from ``kernels/`` and records a backward that runs its
backward kernel.

>>> import netcl_lite.functional as F
"""

from netcl_lite.functional.elementwise import add, mul, scale
from netcl_lite.functional.matmul import matmul
from netcl_lite.functional.reduce import sum
from netcl_lite.functional.shape import permute, reshape, transpose
from netcl_lite.functional.softmax import softmax
from netcl_lite.functional.attention import (
    attention_weights,
    scaled_dot_product_attention,
)

__all__ = ["add", "mul", "scale", "sum", "matmul"]
__all__ += ["reshape", "permute", "transpose", "softmax",
            "attention_weights", "scaled_dot_product_attention"]
