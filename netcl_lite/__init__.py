"""netcl_lite: the small OpenCL library behind the "Tokens & Attention" course.

Importing the package touches no OpenCL device; the first call to
``manager.default()`` does.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> Tensor.from_host(queue, np.arange(3.0)).to_host()
array([0., 1., 2.], dtype=float32)
"""

__version__ = "0.1.0"

# the packages, each a page of the course's reference (the core modules
# have no __all__: their pages show every top-level name)
__all__ = ["core", "autograd", "functional", "inference", "nn", "optim",
           "text", "viz", "interp"]
