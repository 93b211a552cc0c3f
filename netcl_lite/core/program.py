"""Build each ``kernels/<name>.cl`` once per context and launch its kernels.

PoCL compiles a program in about a second and each new local size costs
another half second, so we (1) build lazily, once per context, (2) keep the
``cl.Kernel`` objects, and (3) always launch with one of two fixed local
sizes, ``LOCAL_1D`` or ``LOCAL_2D``.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> x = Tensor.from_host(queue, np.ones(5))
>>> launch(queue, "elementwise", "scale_forward", (5,), LOCAL_1D, x, x, 3.0, 5)
>>> x.to_host()
array([3., 3., 3., 3., 3.], dtype=float32)
"""

import pathlib

import numpy as np
import pyopencl as cl

LOCAL_1D = (64,)
LOCAL_2D = (8, 8)

# context.int_ptr -> {program name -> {kernel name -> cl.Kernel}}
_built = {}
_traces = []  # open ``trace()`` lists; each launch appends "program.cl:kernel"


def ceil_div(n, d):
    """The smallest integer >= n / d, for ints n >= 0 and d > 0: 10, 4 -> 3."""
    return -(-n // d)


def kernel_dir():
    """Where the ``.cl`` files are.

    In the repository (and an editable install) they sit in the top-level
    ``kernels/`` folder, next to ``chapters/``; a wheel carries the same
    files as ``netcl_lite/kernels/`` (``pyproject.toml`` maps the folder).
    """
    package = pathlib.Path(__file__).resolve().parents[1]
    for folder in (package.parent / "kernels", package / "kernels"):
        if (folder / "matmul.cl").is_file():
            return folder
    raise RuntimeError(
        f"no kernels/*.cl next to {package}: reinstall netcl_lite")


def kernel_source(name):
    """The text of ``kernels/<name>.cl``."""
    path = kernel_dir() / f"{name}.cl"
    if not path.is_file():
        raise ValueError(f"no kernel file kernels/{name}.cl")
    return path.read_text(encoding="utf-8")


def kernels(context, program):
    """Every kernel of one program, built on first use for this context."""
    per_context = _built.setdefault(context.int_ptr, {})
    if program not in per_context:
        built = cl.Program(context, kernel_source(program)).build()
        per_context[program] = {k.function_name: k for k in built.all_kernels()}
    return per_context[program]


def _arg(value):
    """Python scalars become the 32-bit types every kernel takes."""
    if isinstance(value, bool):
        return np.int32(value)
    if isinstance(value, int):
        return np.int32(value)
    if isinstance(value, float):
        return np.float32(value)
    if hasattr(value, "buffer"):  # a Tensor
        return value.buffer
    return value


def launch(queue, program, name, global_size, local_size, *args):
    """Run one kernel; the global size is rounded up to the local size.

    Kernels therefore receive their true sizes as arguments and return early
    for the padding work-items.
    """
    if any(g == 0 for g in global_size):
        return
    padded = tuple(
        ceil_div(g, l) * l for g, l in zip(global_size, local_size)
    )
    knl = kernels(queue.context, program)[name]
    knl(queue, padded, local_size, *[_arg(a) for a in args])
    for log in _traces:
        log.append(f"{program}.cl:{name}")


class trace:
    """Collect the kernels launched inside a ``with`` block, in order.

    >>> with trace() as ran:
    ...     pass                     # run some ops here
    >>> ran
    []
    """

    def __enter__(self):
        self.log = []
        _traces.append(self.log)
        return self.log

    def __exit__(self, *exc):
        _traces.remove(self.log)
        return False
