"""Run a kernel of your own: build an OpenCL C file and run one of its
kernels on numpy arrays (the course's kernel exercises, chapters 04 and 06).

``run_kernel_file(path, kernel, global_size, args)`` reads the file, checks
``args`` (a dict by the kernel's parameter names: numpy arrays for
``__global`` buffers, Python numbers for scalars) against the kernel's
signature, builds the file for the device, runs the kernel once and returns
every buffer as it is afterwards, by name. The global size is rounded up to
the local size, as ``launch`` does for the library's kernels, so a kernel
must return early for the work-items past its data.

>>> import numpy as np
>>> from netcl_lite.core.program import kernel_dir
>>> x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
>>> ran = run_kernel_file(kernel_dir() / "softmax.cl", "softmax_forward", (2,),
...                       dict(x=x, y=np.zeros((2, 3)), R=2, Sq=1, Sk=3, causal=0))
>>> ran["y"].round(4)
array([[0.09  , 0.2447, 0.6652],
       [0.3333, 0.3333, 0.3333]], dtype=float32)

What goes wrong is said plainly:

- a file that does not compile raises ``KernelBuildError``, whose message is
  the compiler's log, each error with its line of the file;
- a missing or extra argument, or a buffer of the wrong kind (floats for an
  ``int *``), is a ValueError naming it, before anything is built;
- the kernel's reach past its buffers is caught on a device that does not
  check accesses (PoCL, Intel, GPUs) by guard values after each buffer:
  NaN after a float buffer, so a value read past the end spreads NaN into
  what it computes, and a ``BufferOverrun`` when any guard was written.
  Oclgrind (``NETCL_PLATFORM=oclgrind``) checks every access itself, so
  there the buffers have no guards and Oclgrind reports the access.

``repeat=n`` also times the kernel: ``ran.seconds`` is the shortest device
time of n more launches (OpenCL profiling events), for comparing a kernel
with the library's on one device.
"""

import pathlib
import re
import warnings

import numpy as np
import pyopencl as cl

from netcl_lite.core.device import context_of, device_of, manager
from netcl_lite.core.program import LOCAL_1D, LOCAL_2D, splice_includes
from netcl_lite.core.roofline import profiling_queue
from netcl_lite.core.signature import (BUFFER_DTYPES, check_args,
                                       parse_signatures, scalar_dtypes)

# The guard values written after each buffer. A float buffer's are NaN, so
# that a value read past the end spreads NaN into what it computes, with a
# payload of the buffer's own: arithmetic on them gives another NaN, and a
# value copied from one buffer's guard to another's differs, so both writes
# are caught. (0x7fb0_0000 + k: signalling NaNs, which loads and stores keep
# bit for bit; float arithmetic turns them into quiet NaNs.) An int
# buffer's are 0, so that an id read past the end still indexes a table
# inside its bounds.
GUARD_NAN = 0x7FB00000
GUARD_INT = 0
GUARD_SLACK = 1024   # guard values added beyond what the padding can reach
# Where an error is, in a compiler's log: "<any path>.cl:12:5: error: ..."
# (PoCL and Oclgrind name a temporary copy of the source) or, at the start
# of a line, "3:12:5: error: ..." (Intel's runtime numbers its sources)
_LOCATION = re.compile(r"(?:(?:\S*?[\\/])?[\w.-]+\.cl|^\d+):(\d+):(\d+)")


class KernelBuildError(RuntimeError):
    """The OpenCL C file did not compile; the message is the compiler's log."""


class BufferOverrun(RuntimeError):
    """The kernel wrote past the end of one of its buffers."""


class KernelRun:
    """What ``run_kernel_file`` returns: ``buffers``, every buffer argument
    after the run (a numpy array of the shape passed, by parameter name;
    ``ran["y"]`` reads one), ``seconds`` (the shortest device time of the
    ``repeat`` timed launches, None without them) and ``log`` (the
    compiler's messages, often empty)."""

    def __init__(self, buffers, seconds, log):
        self.buffers, self.seconds, self.log = buffers, seconds, log

    def __getitem__(self, name):
        return self.buffers[name]

    def __repr__(self):
        shapes = ", ".join(f"{k}: {v.shape}" for k, v in self.buffers.items())
        return f"KernelRun({shapes}; seconds={self.seconds})"


def _located_log(log, path, lines, origin=None):
    """The log with the compiler's name for the source replaced by ``path``,
    and under each error's first line the line of the file it points at
    (unless the compiler quotes it itself, as clang does). ``origin``: for
    each line the compiler saw, the line of ``path`` it comes from (where
    included files were spliced in; ``_with_includes``)."""
    log = log.strip().splitlines()
    out = []
    for k, line in enumerate(log):
        found = _LOCATION.search(line)
        if not found:
            out.append(line)
            continue
        row, col = int(found.group(1)), int(found.group(2))
        if origin and 1 <= row <= len(origin):
            row = origin[row - 1]
        out.append(line[:found.start()] + f"{path}:{row}:{col}" +
                   line[found.end():])
        quoted = k + 1 < len(log) and 1 <= row <= len(lines) and \
            lines[row - 1].strip() in log[k + 1]
        if 1 <= row <= len(lines) and not quoted:
            out.append("    " + lines[row - 1].rstrip())
            out.append("    " + " " * (col - 1) + "^")
    return "\n".join(out)


def _error_log(text):
    """The compiler's log from pyopencl's error message, which wraps it in
    "Build on <pyopencl.Device ...>:" per device and the options used.
    (Asking the failed program for its log instead makes pyopencl build a
    fresh, empty one where the driver keeps no build cache.)"""
    text = re.sub(r"^\((options:|source saved as) [^\n]*\)", "", text,
                  flags=re.M)
    parts = re.split(r"Build on <pyopencl\.Device [^\n]*>:\n", text)
    return "\n".join(p.strip() for p in parts[1:]) if len(parts) > 1 else text


def _with_includes(path, source):
    """``source`` with each ``#include "x.cl"`` line replaced by x.cl from
    beside ``path`` (``program.splice_includes``), and for each line of the
    result the line of ``source`` it comes from (an included file's lines:
    its ``#include`` line). Compilers disagree on honouring ``#line``, so
    the log's line numbers are mapped back here instead."""
    text, origin = [], []
    for row, line in enumerate(source.splitlines(keepends=True), 1):
        spliced = splice_includes(line, path.parent)
        text.append(spliced)
        origin += [row] * len(spliced.splitlines())
    return "".join(text), origin


def _build_file(context, path, source):
    """Build ``source`` (the text of ``path``) for ``context``: the
    cl.Program and the compiler's log, or a KernelBuildError whose message
    is the log, located in ``path``. An ``#include "x.cl"`` line takes
    x.cl from beside ``path``."""
    text, origin = _with_includes(path, source)
    program = cl.Program(context, text)
    try:
        with warnings.catch_warnings():   # pyopencl warns of any log
            warnings.simplefilter("ignore", cl.CompilerWarning)
            program.build()
    except cl.RuntimeError as err:
        raise KernelBuildError(
            f"{path} does not compile:\n"
            f"{_located_log(_error_log(str(err)), path, source.splitlines(), origin)}"
        ) from None
    log = "\n".join(program.get_build_info(d, cl.program_build_info.LOG).strip()
                    for d in context.devices)
    return program, _located_log(log.strip(), path, source.splitlines(),
                                 origin)


def _buffer_array(where, param, value):
    """A buffer argument as the C-contiguous float32 or int32 array the
    kernel reads, or a ValueError naming it."""
    array = np.asarray(value)
    want = BUFFER_DTYPES.get(param.ctype)
    if want is None:
        raise ValueError(f"{where}: {param.name!r} is a __global {param.ctype} "
                         "buffer; run_kernel_file passes float and int only")
    kinds = "f" if param.ctype == "float" else "iu"
    if array.dtype.kind not in kinds or array.size == 0:
        raise ValueError(f"{where}: {param.name!r} is a __global {param.ctype} "
                         f"buffer: pass a non-empty array of "
                         f"{'floats' if kinds == 'f' else 'integers'}, got "
                         f"{array.dtype} {array.shape}")
    if kinds == "iu":
        info = np.iinfo(np.int32)
        if array.min() < info.min or array.max() > info.max:
            raise ValueError(f"{where}: {param.name!r} holds values that do "
                             "not fit in int32")
    return np.ascontiguousarray(array, dtype=want)


class _Guarded:
    """A buffer argument as ``check_args`` takes it (.buffer, .dtype)."""

    def __init__(self, buffer, dtype):
        self.buffer, self.dtype = buffer, dtype


def _overwritten(full, n, guard):
    """The offsets past the end (of the ``n`` values) whose guard value the
    kernel changed; compared as bits, so that NaN equals NaN."""
    now = full[n:].view(np.uint32)            # float32 and int32 alike
    return np.flatnonzero(now != np.frombuffer(guard, dtype=np.uint32))


def run_kernel_file(path, kernel, global_size, args, local_size=None,
                    queue=None, repeat=0):
    """Build the OpenCL C file ``path``, run its ``kernel`` once on ``args``
    and return a ``KernelRun``.

    ``args``: a dict with one entry per kernel parameter, by name: a numpy
    array (any shape, float or int as the parameter says) for each
    ``__global`` buffer, an int or a float for each scalar. ``global_size``
    is rounded up to ``local_size`` (default 64, or 8 x 8 for a 2-D size).
    ``queue``: the default device's queue unless given. ``repeat``: how many
    more launches to time.
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"no file {path} (from {pathlib.Path.cwd()})")
    source = path.read_text(encoding="utf-8")
    where = f"{path.name}:{kernel}"
    found = parse_signatures(source)
    if kernel not in found:
        raise ValueError(f"{path} has no __kernel void {kernel}(...); it has "
                         f"{sorted(found) or 'none'}")
    params = found[kernel]
    names = [p.name for p in params]
    missing = [n for n in names if n not in args]
    extra = [n for n in args if n not in names]
    if missing or extra:
        raise ValueError(f"{where} takes {names}: missing {missing}, "
                         f"unknown {extra}")
    global_size = tuple(int(g) for g in np.atleast_1d(global_size))
    if local_size is None:
        local_size = LOCAL_1D if len(global_size) == 1 else LOCAL_2D
    local_size = tuple(int(s) for s in np.atleast_1d(local_size))
    if len(local_size) != len(global_size) or min(global_size) < 1 or \
            min(local_size) < 1:
        raise ValueError(f"{where}: global size {global_size} and local size "
                         f"{local_size} must be positive, of one length")
    padded = tuple(-(-g // s) * s for g, s in zip(global_size, local_size))
    arrays = {p.name: _buffer_array(where, p, args[p.name])
              for p in params if p.kind == "buffer"}
    # the scalars are checked now, before anything is built or run
    check_args(where, params, [_Guarded(None, arrays[p.name].dtype)
                               if p.kind == "buffer" else args[p.name]
                               for p in params])

    queue = queue or manager.default("auto").queue
    context = context_of(queue)
    guarded = not device_of(queue).simulator
    program, log = _build_file(context, path, source)
    timing = profiling_queue(queue)
    # each buffer is followed by guard values: as many as the padding
    # work-items would reach if each wrote as much as a real one, and more
    reach = int(np.prod(padded)) / int(np.prod(global_size))
    buffers, guards = {}, {}
    for k, (name, array) in enumerate(arrays.items()):
        n = array.size
        spare = int(np.ceil(n * (reach - 1))) + GUARD_SLACK if guarded else 0
        full = np.empty(n + spare, dtype=array.dtype)      # (n + spare,)
        full[:n] = array.ravel()                            # (n,) of them
        bits = GUARD_NAN + 1 + k if array.dtype.kind == "f" else GUARD_INT
        full[n:].view(np.uint32)[:] = bits
        guards[name] = full[n:].tobytes()
        buffers[name] = (full, cl.Buffer(context, cl.mem_flags.READ_WRITE |
                                         cl.mem_flags.COPY_HOST_PTR,
                                         hostbuf=full))
    values = [_Guarded(buffers[p.name][1], arrays[p.name].dtype)
              if p.kind == "buffer" else args[p.name] for p in params]
    knl = getattr(program, kernel)
    knl.set_scalar_arg_dtypes(scalar_dtypes(params))   # pyopencl packs them
    knl.set_args(*check_args(where, params, values))
    cl.enqueue_nd_range_kernel(timing, knl, padded, local_size).wait()
    out = {}
    for name, (full, buffer) in buffers.items():
        cl.enqueue_copy(timing, full, buffer)
        n = arrays[name].size
        hit = _overwritten(full, n, guards[name])
        if hit.size:
            raise BufferOverrun(
                f"{where} wrote {hit.size} values past the end of {name!r}, "
                f"which holds {n}: the first at flat index {n + hit[0]}. The "
                f"global size {global_size} was rounded up to {padded}, a "
                f"multiple of the local size {local_size}: return early for "
                "the work-items past your data.")
        out[name] = full[:n].reshape(np.shape(args[name])).copy()  # as passed
    seconds = None
    if repeat:
        events = [cl.enqueue_nd_range_kernel(timing, knl, padded, local_size)
                  for _ in range(repeat)]
        timing.finish()
        seconds = min((e.profile.end - e.profile.start) * 1e-9 for e in events)
    return KernelRun(out, seconds, log)
