"""Build each ``kernels/<name>.cl`` once per context and launch its kernels.

PoCL compiles a program in about a second and each new local size costs
another half second, so we (1) build lazily, once per context, (2) keep the
``cl.Kernel`` objects, and (3) always launch with one of two fixed local
sizes, ``LOCAL_1D`` or ``LOCAL_2D``. The kernels are kept by the Device
(``device.programs``, shared by the Devices of one context), so they go
when the last Device of that context goes.

``launch`` takes a Device or a pyopencl queue (its Device is found), and
checks every argument against the kernel's signature, which OpenCL itself
reports (``core/signature.py``).

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
import re
import threading
import warnings
from collections import namedtuple

import pyopencl as cl

from netcl_lite.core.device import Device, device_of
from netcl_lite.core.signature import (ARG_INFO, check_args, read_signatures,
                                       scalar_dtypes)

LOCAL_1D = (64,)
LOCAL_2D = (8, 8)
LOCAL_FEW = (8,)   # a 1D kernel's work-group when it has few work-items

# One built program of a device: {kernel name: cl.Kernel} and
# {kernel name: Signature} (core/signature.py)
Program = namedtuple("Program", "kernels signatures")
# (program, options) -> the compiler's log of its last build, kept for
# ``python -m netcl_lite.doctor --build-log`` instead of printed: Intel's
# compiler fills it with vectorizer remarks even when all is well
build_logs = {}
# A cached cl.Kernel holds its arguments: setting them and enqueueing must not
# interleave between threads (OpenCL: clSetKernelArg is not thread-safe).
_lock = threading.RLock()


class _Traces(threading.local):
    """This thread's open ``trace()`` logs (each launch appends
    "program.cl:kernel" to every one): a trace sees the launches of the
    thread that opened it, and ``untraced`` hides only that thread's."""

    logs = ()


_traces = _Traces()


def local_1d(items):
    """The work-group size for a 1D kernel of ``items`` work-items:
    LOCAL_1D (64), or LOCAL_FEW (8) when that would make under 16 groups.

    A CPU's cores share out whole work-groups, so a few big ones leave a
    core idle at the end. Two cores, measured: matmul_tiled's 88 work-items
    of the (128 x 2048) @ (2048 x 64) weight gradient took 297 us in groups
    of 64 (one core got 64 tiles, the other 24) and 184 us in groups of 8;
    flash attention's backward_dkv, 704 work-items at B 16, 4 heads, S 64,
    took 1.5 ms in groups of 64 and 1.3 ms in groups of 8. A third local
    size costs PoCL one more compile of the program, once per machine.

    >>> local_1d(2048), local_1d(704)
    ((64,), (8,))
    """
    return LOCAL_1D if items >= 16 * LOCAL_1D[0] else LOCAL_FEW


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
    """The text of ``kernels/<name>.cl``, with each ``#include "x.cl"`` line
    replaced by that file's text (here, not by the OpenCL compiler: PoCL's
    build cache would not notice a change in an included file)."""
    path = kernel_dir() / f"{name}.cl"
    if not path.is_file():
        raise ValueError(f"no kernel file kernels/{name}.cl")
    return splice_includes(path.read_text(encoding="utf-8"), kernel_dir())


def splice_includes(text, folder):
    """``text`` with each ``#include "x.cl"`` line replaced by the text of
    ``folder/x.cl`` (itself spliced)."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        included = re.match(r'#include "(\w+)\.cl"', line)
        if included:
            path = pathlib.Path(folder) / f"{included.group(1)}.cl"
            if not path.is_file():
                raise ValueError(f"{path.name}, included at line {i + 1}, is "
                                 f"not in {folder}")
            lines[i] = splice_includes(path.read_text(encoding="utf-8"),
                                       folder) + "\n"
    return "".join(lines)


def kernels(device, program, options=()):
    """Every kernel of one program, {name: cl.Kernel}, built on first use
    for the device (a Device or a queue); ``options``: build options, e.g.
    ``("-DVW=16",)`` (one build each)."""
    return _built(device_of(device), program, tuple(options)).kernels


def signatures_of(device):
    """{kernel name: Signature} of every kernel built for the device so far
    (``core/roofline.py`` names a launch's size arguments with them)."""
    found = {}
    for built in list(device_of(device).programs.values()):
        found.update(built.signatures)
    return found


def _built(device, program, options):
    """The device's ``Program`` for ``kernels/<program>.cl`` and
    ``options``, built (and its signatures read) on first use."""
    key = (program, options)
    with _lock:
        found = device.programs.get(key)
        if found is None:
            source = kernel_source(program)
            built = build(device.context, source, options + ARG_INFO)
            build_logs[key] = build_log(built)
            knls = {k.function_name: k for k in built.all_kernels()}
            signatures = read_signatures(knls, source)
            for name, knl in knls.items():   # pyopencl packs the numbers
                knl.set_scalar_arg_dtypes(scalar_dtypes(signatures[name]))
            found = device.programs[key] = Program(knls, signatures)
        return found


def build(context, source, options=()):
    """``cl.Program(context, source).build(options)``, without pyopencl's
    "Non-empty compiler output" warning on success. A failed build still
    raises, with the compiler's log in the message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cl.CompilerWarning)
        return cl.Program(context, source).build(list(options))


def build_log(built):
    """The compiler's messages for a built program, one block per device
    that said anything (``""`` when all were silent)."""
    logs = []
    for device in built.devices:
        text = built.get_build_info(device, cl.program_build_info.LOG)
        if text and text.strip():
            logs.append(f"[{device.name.strip()}]\n{text.strip()}")
    return "\n".join(logs)


def launch(device, program, name, global_size, local_size, *args,
           options=()):
    """Run one kernel on a device (a Device or a pyopencl queue); the
    global size is rounded up to the local size.

    Kernels therefore receive their true sizes as arguments and return early
    for the padding work-items. Every argument is first checked against the
    kernel's signature (``core/signature.py``): Tensors become their
    buffers, Python numbers the kernel's int or float types. ``options``:
    the program's build options. A kernel the file does not have is a
    ValueError that lists the ones it has.
    """
    if type(device) is not Device:
        device = device_of(device)
    if type(options) is not tuple:
        options = tuple(options)
    built = device.programs.get((program, options))
    if built is None:
        built = _built(device, program, options)
    knl = built.kernels.get(name)
    if knl is None:
        raise ValueError(f"kernels/{program}.cl has no kernel {name!r}; its "
                         f"kernels are {sorted(built.kernels)}")
    args = check_args(f"{program}.cl:{name}", built.signatures[name], args)
    if 0 in global_size:
        return
    padded = tuple(-(-g // l) * l for g, l in zip(global_size, local_size))
    with _lock:  # set-args + enqueue as one step (see _lock)
        knl(device.queue, padded, local_size, *args)
    for log in _traces.logs:
        log.append(f"{program}.cl:{name}")


def note_allocation(nbytes):
    """``Tensor.empty`` reports each new device buffer to this thread's open
    traces."""
    for log in _traces.logs:
        log.allocations.append(nbytes)


class untraced:
    """Launches and allocations inside a ``with untraced():`` block are left
    out of the open ``trace()``s of this thread (the tuner's timing runs,
    core/tune.py); another thread's traces go on seeing its launches."""

    def __enter__(self):
        self.saved = _traces.logs
        _traces.logs = ()

    def __exit__(self, *exc):
        _traces.logs = self.saved
        return False


class TraceLog(list):
    """The kernels launched, in order ("program.cl:kernel"), and in
    ``.allocations`` the size in bytes of every buffer created, in order."""

    def __init__(self):
        super().__init__()
        self.allocations = []


class trace:
    """Collect the kernels launched, and the buffers allocated, by this
    thread inside a ``with`` block.

    >>> import numpy as np
    >>> from netcl_lite.core.device import manager
    >>> from netcl_lite.core.tensor import Tensor
    >>> queue = manager.default("cpu").queue
    >>> with trace() as ran:
    ...     x = Tensor.from_host(queue, np.ones((2, 3)))     # 6 float32 values
    ...     launch(queue, "elementwise", "scale_forward", (6,), LOCAL_1D,
    ...            x, x, 2.0, 6)
    >>> ran, ran.allocations
    (['elementwise.cl:scale_forward'], [24])
    """

    def __enter__(self):
        self.log = TraceLog()
        _traces.logs = (*_traces.logs, self.log)
        return self.log

    def __exit__(self, *exc):   # by identity: two logs may hold equal lists
        _traces.logs = tuple(log for log in _traces.logs if log is not self.log)
        return False
