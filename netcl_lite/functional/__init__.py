"""The differentiable ops. Each takes and returns autograd nodes, runs a
forward kernel from ``kernels/`` and records a backward that runs its
backward kernel.

>>> import netcl_lite.functional as F
"""

from netcl_lite.functional.elementwise import add, mul, scale
from netcl_lite.functional.matmul import matmul
from netcl_lite.functional.reduce import sum

__all__ = ["add", "mul", "scale", "sum", "matmul"]
