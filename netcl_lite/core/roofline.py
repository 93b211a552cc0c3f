"""The roofline of the device a queue runs on, and where kernels sit under it.

Two numbers bound the speed of any kernel on a device: its peak arithmetic
rate P (FLOP/s) and its memory bandwidth B (bytes/s). A kernel that does F
floating-point operations while moving Q bytes to or from memory has the
arithmetic intensity I = F / Q (FLOPs per byte) and cannot run faster than
min(P, I * B): below the ridge point I = P / B memory is the limit, above
it arithmetic is (Williams, Waterman and Patterson 2009). Chapter 13 draws
it for the reader's machine.

This module measures, it computes nothing a model needs:

- ``peak_flops(queue)``: ``kernels/roofline.cl:fma_loop``, chains of fused
  multiply-adds that never touch memory;
- ``copy_bandwidth(queue)``: ``roofline.cl:copy`` on arrays far larger
  than the caches;
- ``profile(queue, step)``: every kernel that ``step()`` launches, its
  device time (OpenCL profiling events) and its FLOPs and bytes, counted
  from the launch's own size arguments by ``work``.

The counts are a model, written beside each kernel's launch
(``core/work.py``; the ops register theirs when ``netcl_lite.functional``
is imported): FLOPs count +, -, *, / and one exp, sqrt or max as 1 each;
bytes are the compulsory traffic, every input read once and every output
written once (float32 and int32: 4 bytes a value). Caches can make a
kernel move fewer bytes than that (a value read twice from L1), and
re-reading a tile makes it move more.

>>> import netcl_lite.functional      # the ops' counts, beside their launches
>>> counts = work("matmul_tiled",
...               dict(batch=1, M=2048, N=352, K=128, b_bs=0))
>>> counts                       # 2 M N K FLOPs; 4 (M K + K N + M N) bytes
(184549376, 4112384)
>>> round(counts[0] / counts[1], 1)   # the intensity, FLOPs per byte
44.9
>>> roof = Roof(flops=100e9, bandwidth=20e9)    # P 100 GFLOP/s, B 20 GB/s
>>> roof.ridge, roof.attainable(1.0), roof.attainable(44.9)
(5.0, 20000000000.0, 100000000000.0)
"""

from collections import namedtuple

import numpy as np
import pyopencl as cl

from netcl_lite.core.device import device_of
from netcl_lite.core.program import LOCAL_1D, launch, signatures_of
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.tensor_ops import work_items
from netcl_lite.core.work import FLOAT, counts, work

NACC = 12            # accumulators per work-item in fma_loop (roofline.cl)
WIDTHS = (4, 8, 16)  # the vector widths fma_loop is built with; the best wins


class Roof:
    """A device's two limits: ``flops`` (FLOP/s) and ``bandwidth`` (bytes/s).

    ``ridge``: the intensity (FLOPs per byte) where they meet;
    ``attainable(i)``: the most FLOP/s a kernel of intensity i can reach.
    """

    def __init__(self, flops, bandwidth):
        if not (flops > 0 and bandwidth > 0):
            raise ValueError(f"a roof needs flops > 0 and bandwidth > 0, "
                             f"got {flops} and {bandwidth}")
        self.flops, self.bandwidth = float(flops), float(bandwidth)

    @property
    def ridge(self):
        return self.flops / self.bandwidth

    def attainable(self, intensity):
        return min(self.flops, intensity * self.bandwidth)

    def __repr__(self):
        return (f"Roof({self.flops / 1e9:.1f} GFLOP/s, "
                f"{self.bandwidth / 1e9:.1f} GB/s, ridge {self.ridge:.2f} "
                f"FLOP/byte)")


# --- the two measurements ------------------------------------------------------
def profiling_queue(queue):
    """A new queue on ``queue``'s context and device that records each
    launch's start and end (OpenCL profiling events); ops on it share the
    kernels already built for that context."""
    return cl.CommandQueue(
        queue.context, queue.device,
        properties=cl.command_queue_properties.PROFILING_ENABLE)


def _seconds(event):
    """A finished launch's device time, from its profiling event (ns)."""
    return (event.profile.end - event.profile.start) * 1e-9


def _best_time(queue, run, repeats):
    """The shortest device time of the one launch ``run()`` makes on
    ``queue`` (a profiling_queue), over ``repeats`` calls after a first one
    (``profile`` below): on a shared machine load only ever adds time.
    Device time leaves out what Python spends enqueueing, ~0.1 ms a launch."""
    (only,) = profile(queue, run, steps=repeats)
    return only.seconds


def fma_work_items(queue):
    """fma_loop's global size: 4 work-groups of LOCAL_1D per compute unit on
    a CPU (each core takes whole work-groups), 32 on a GPU (whose cores each
    keep many work-groups in flight to hide latency)."""
    device = device_of(queue)
    per_unit = 4 if device.kind == "cpu" else 32
    return device.cl_device.max_compute_units * per_unit * LOCAL_1D[0]


def peak_flops(queue, seconds=0.01, repeats=10, widths=WIDTHS):
    """The device's arithmetic peak in FLOP/s, as fma_loop measures it:
    (FLOP/s, the vector width that reached it).

    For each vector width, the number of iterations doubles until one launch
    takes ``seconds``, then the best of ``repeats`` launches gives the rate
    (short launches, many of them: on a busy machine one of them is likely
    to find the cores free).
    The fastest width wins: which one fills the vector registers best is the
    device's business, and timing decides (as core/tune.py does for matmul).
    """
    timing = profiling_queue(queue)
    n = fma_work_items(queue)
    out = Tensor.empty(timing, (n,))
    best = (0.0, None)
    for vw in widths:
        def run(iters, vw=vw):
            launch(timing, "roofline", "fma_loop", (n,), LOCAL_1D,
                   out, 0.5, 1.0, iters, n, options=(f"-DVW={vw}",))

        iters = 64
        while (_best_time(timing, lambda: run(iters), 1) < seconds
               and iters < 2 ** 30):
            iters *= 2
        t = _best_time(timing, lambda: run(iters), repeats)
        rate = 2.0 * iters * NACC * vw * n / t
        best = max(best, (rate, vw), key=lambda b: b[0])
    return best


def copy_bytes(queue, in_cache=False):
    """How many bytes each of copy's two arrays holds: four times the
    device's cache (so neither array fits in it) and 32 MiB at the least,
    no more than a quarter of the largest buffer the device allows; with
    ``in_cache``, an eighth of the cache (both arrays fit) and 256 KiB at
    the least."""
    device = device_of(queue)
    cache = device.cl_device.global_mem_cache_size
    if in_cache:
        size = max(cache // 8, 256 << 10)
    else:
        size = max(4 * cache, 32 << 20)
    return min(size, device.max_alloc // 4) // FLOAT * FLOAT


def copy_bandwidth(queue, nbytes=None, repeats=5):
    """The memory bandwidth in bytes/s, as copy measures it: the bytes the
    program reads and writes (2 * nbytes) over the best of ``repeats``
    launch times (``nbytes``: each array's size, ``copy_bytes(queue)`` when
    None). A CPU's cache also reads each destination line before it writes
    it (write-allocate), which this count leaves out, as the STREAM
    benchmark does."""
    nbytes = copy_bytes(queue) if nbytes is None else nbytes
    n = nbytes // FLOAT
    if n < 1:
        raise ValueError(f"copy_bandwidth needs nbytes >= {FLOAT}, got {nbytes}")
    timing = profiling_queue(queue)
    # from_host: buffers of their own, freed with the Tensors (not pooled)
    src = Tensor.from_host(timing, np.ones(n, np.float32))
    dst = Tensor.from_host(timing, np.zeros(n, np.float32))

    def run():
        launch(timing, "roofline", "copy", (work_items(timing, n),), LOCAL_1D,
               dst, src, n)

    # the first call builds the kernel and touches every page once
    return 2.0 * n * FLOAT / _best_time(timing, run, repeats)


@counts("copy")
def _copy_work(a):
    # n values read and n written (fma_loop's FLOPs depend on its build
    # option VW, which no size argument tells: peak_flops counts them)
    return 0, 2 * FLOAT * a["n"]


# --- where a step's time goes ---------------------------------------------------
KernelTime = namedtuple("KernelTime", "name launches flops bytes seconds")
KernelTime.__doc__ = """One kernel's share of a step: its launches, their
FLOPs and bytes summed (None when nothing counts the kernel: ``work``),
and their device time in seconds."""


def profile(queue, step, steps=3):
    """Run ``step()`` once to build and allocate, then ``steps`` more times,
    recording every kernel launched on ``queue`` (a ``profiling_queue``);
    a list of KernelTime, the most time first.

    Each launch's time is the shortest over the steps (every step launches
    the same sequence; load on a shared machine only adds time). The
    launches are seen by wrapping pyopencl's ``Kernel.__call__`` for the
    duration, which is how ``bench/train_step.py --profile`` sees them too.
    """
    if not queue.properties & cl.command_queue_properties.PROFILING_ENABLE:
        raise ValueError("profile needs a queue made by profiling_queue(queue)")
    seen = []
    kernel_call = cl.Kernel.__call__

    def recorded(kernel, on_queue, global_size, local_size, *args, **kw):
        event = kernel_call(kernel, on_queue, global_size, local_size, *args,
                            **kw)
        if on_queue == queue:
            seen.append((kernel.function_name, args, event))
        return event

    step()
    queue.finish()
    cl.Kernel.__call__ = recorded
    try:
        for _ in range(steps):
            step()
        queue.finish()
    finally:
        cl.Kernel.__call__ = kernel_call
    if not seen or len(seen) % steps:
        raise RuntimeError(f"the {steps} steps launched {len(seen)} kernels on "
                           "the queue: not the same sequence every step")
    n = len(seen) // steps
    params = signatures_of(queue)    # of the kernels built, so those it ran
    names = [s[0] for s in seen]
    if names != names[:n] * steps:
        raise RuntimeError("the steps launched different kernel sequences")
    per = {}
    for i, (name, args, _) in enumerate(seen[:n]):
        t = min(_seconds(seen[i + s * n][2]) for s in range(steps))
        sizes = {p.name: np.asarray(v).item()   # numpy -> Python numbers
                 for p, v in zip(params[name], args) if p.kind == "scalar"}
        counts = work(name, sizes)
        launches, flops, nbytes, total = per.get(name, (0, 0, 0, 0.0))
        if counts is None or flops is None:
            flops = nbytes = None
        else:
            flops, nbytes = flops + counts[0], nbytes + counts[1]
        per[name] = (launches + 1, flops, nbytes, total + t)
    found = [KernelTime(name, *v) for name, v in per.items()]
    return sorted(found, key=lambda k: -k.seconds)

