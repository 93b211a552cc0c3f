"""A ``Tensor`` is an OpenCL buffer plus a shape and a dtype.

Only two dtypes exist: float32 for values and int32 for token ids. Tensors
are always contiguous (row-major), so ``reshape`` is a free view.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> dev = manager.default("cpu")
>>> t = Tensor.from_host(dev.queue, np.arange(6).reshape(2, 3))  # int64 -> int32
>>> t.shape, t.dtype, t.device is dev
((2, 3), dtype('int32'), True)
>>> t.reshape(3, 2).to_host()
array([[0, 1],
       [2, 3],
       [4, 5]], dtype=int32)
"""

import math
import resource

import numpy as np
import pyopencl as cl

from netcl_lite.core.device import device_of
from netcl_lite.core.program import note_allocation

FLOAT = np.dtype(np.float32)
INT = np.dtype(np.int32)
I32 = np.iinfo(np.int32)
# below this many bytes Tensor.empty skips the fit checks (each costs ~2 us;
# one such buffer cannot exhaust a device or an address-space limit)
SMALL = 1 << 20


def _to_device_dtype(array):
    """Cast float64 -> float32 and int64 -> int32 (when every value fits).

    A finite float that float32 cannot hold (|x| > 3.4e38) raises a
    ValueError naming it, instead of silently becoming inf; inf and NaN
    stay what they are.
    """
    kind = array.dtype.kind
    if array.dtype in (FLOAT, INT):
        return array
    if kind == "f":
        with np.errstate(over="ignore"):
            out = array.astype(FLOAT)
        overflow = np.isinf(out) & np.isfinite(array)
        if overflow.any():
            where = tuple(int(i) for i in np.argwhere(overflow)[0])
            raise ValueError(
                f"value {float(array[where])!r} at index {where} does not fit in "
                f"float32 (largest {np.finfo(FLOAT).max:.4g}); scale it first"
            )
        return out
    if kind in "iu":
        if array.size and (array.min() < I32.min or array.max() > I32.max):
            bad = array.max() if array.max() > I32.max else array.min()
            raise ValueError(
                f"integer value {bad} does not fit in int32 "
                f"(range {I32.min}..{I32.max})"
            )
        return array.astype(INT)
    raise ValueError(
        f"unsupported dtype {array.dtype}: use float32/float64 values "
        "or int32/int64 ids"
    )


def host_bytes_left():
    """Bytes this process may still map under ``ulimit -v``, or None (no limit).

    A CPU device keeps its buffers in our own address space, and PoCL only
    maps a buffer when a kernel first touches it: past the limit that is a
    crash inside a kernel launch, not an error we could catch.
    """
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            used = next(int(line.split()[1]) * 1024 for line in f
                        if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return None
    return max(soft - used, 0)


def check_fits(device, nbytes, what):
    """ValueError (naming ``what`` and the bytes) if ``nbytes`` cannot be had.

    Checks the device's largest single allocation, its total memory and,
    where buffers live in this process's memory (a CPU device), the
    process's address-space limit. ``what`` names the request, e.g. "a
    float32 tensor of shape (60000, 60000)"; ``device``: a Device or a
    queue.

    >>> from netcl_lite.core.device import manager
    >>> check_fits(manager.default("cpu"), 2**62, "a test")
    Traceback (most recent call last):
    ...
    ValueError: a test would take 4611686018427387904 bytes (4294967296.0 GiB), ...
    """
    device = device_of(device)          # the device's sizes, read once
    _over(nbytes, device.global_mem, what,
          "the device's memory (global_mem_size)")
    if nbytes > device.max_alloc:
        raise ValueError(
            f"{what} would take {nbytes} bytes ({nbytes / 2**30:.1f} "
            f"GiB), more than one buffer may hold on this device "
            f"(max_mem_alloc_size {device.max_alloc} bytes, "
            f"{device.max_alloc / 2**30:.1f} GiB)")
    if device.host_memory:
        left = host_bytes_left()
        if left is not None and nbytes > left:
            device.release_idle()     # idle pooled buffers count as used
            left = host_bytes_left()
        if left is not None:
            _over(nbytes, left, what,
                  "what this process may still allocate (ulimit -v)")


def _over(nbytes, limit, what, name):
    if nbytes > limit:
        raise ValueError(
            f"{what} would take {nbytes} bytes ({nbytes / 2**30:.1f} GiB), more "
            f"than {name}: {limit} bytes ({limit / 2**30:.1f} GiB)")


def _checked(device, shape, dtype):
    """(shape, dtype, nbytes) of a new Tensor, or a ValueError naming what
    is wrong: a negative size, a dtype, more bytes than the device or this
    process can have (at least 4 bytes: OpenCL forbids 0)."""
    shape = tuple(map(int, shape))
    if min(shape, default=0) < 0:
        raise ValueError(f"negative size in shape {shape}")
    if dtype is not FLOAT and dtype is not INT:   # the common case: fast
        dtype = np.dtype(dtype)
        if dtype not in (FLOAT, INT):
            raise ValueError(f"unsupported dtype {dtype}: use float32 or int32")
    nbytes = max(math.prod(shape) * dtype.itemsize, 4)
    if nbytes > SMALL:      # small ones cannot exhaust a device alone
        what = f"a {dtype.name} tensor of shape {shape}"
        check_fits(device, nbytes, what)
        if math.prod(shape) > I32.max:   # kernels take sizes as int
            raise ValueError(
                f"{what} has {math.prod(shape)} values, more than "
                f"{I32.max} (2^31 - 1): the kernels take sizes as 32-bit "
                "ints; split the work into smaller tensors")
    return shape, dtype, nbytes


class Tensor:
    """A contiguous float32 or int32 array that lives on an OpenCL device.

    ``device``: its Device (``core/device.py``); ``queue`` and ``context``
    are the device's. Wherever a Tensor is made from a ``device``, a
    pyopencl queue does as well (the queue's Device is found).

    A Tensor made by ``empty`` holds a buffer of the device's pool
    (``core/pool.py``): its memory goes back to the pool when the buffer
    object is collected, that is when the Tensor and every view of it
    (``reshape``) are gone.
    """

    def __init__(self, device, buffer, shape, dtype):
        self.device = device_of(device)
        self.buffer = buffer
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        need = math.prod(self.shape) * self.dtype.itemsize
        if not isinstance(buffer, cl.MemoryObjectHolder) or buffer.size < need:
            have = getattr(buffer, "size", None)
            raise ValueError(
                f"a {self.dtype.name} tensor of shape {self.shape} needs a "
                f"cl.Buffer of at least {need} bytes, got "
                f"{type(buffer).__name__} of {have} bytes"
            )

    # --- creation -----------------------------------------------------------
    @classmethod
    def empty(cls, device, shape, dtype=FLOAT):
        """Uninitialised storage (at least 4 bytes: OpenCL forbids 0), from
        the device's pool; ``device``: a Device or a pyopencl queue."""
        device = device_of(device)
        shape, dtype, nbytes = _checked(device, shape, dtype)
        t = cls.__new__(cls)
        t.device, t.shape, t.dtype = device, shape, dtype
        t.buffer = device.allocate(nbytes)   # core/pool.py: reused if idle
        note_allocation(nbytes)              # seen by open ``trace()``s
        return t

    @classmethod
    def _wrap(cls, device, buffer, shape, dtype):
        """A Tensor over a buffer known to fit (no checks: the library's
        own fast path, 1 us instead of 3)."""
        t = cls.__new__(cls)
        t.device, t.buffer, t.shape, t.dtype = device, buffer, shape, dtype
        return t

    @classmethod
    def zeros(cls, device, shape, dtype=FLOAT):
        out = cls.empty(device, shape, dtype)
        pattern = np.zeros(1, dtype=out.dtype)
        cl.enqueue_fill_buffer(out.queue, out.buffer, pattern, 0,
                               out.size * out.dtype.itemsize or 4)
        return out

    @classmethod
    def from_host(cls, device, array):
        """Copy a numpy array (or anything ``np.asarray`` takes) to the
        device (a Device or a pyopencl queue).

        float64 is cast to float32; a finite value beyond float32's range
        (about 3.4e38) raises a ValueError naming it rather than silently
        becoming inf, while inf and NaN pass through unchanged.
        """
        device = device_of(device)
        array = np.asarray(_to_device_dtype(np.asarray(array)), order="C")
        if not array.size:
            return cls.empty(device, array.shape, array.dtype)
        shape, dtype, nbytes = _checked(device, array.shape, array.dtype)
        # A buffer of its own, outside the pool: the driver copies the
        # values when it creates the buffer. A pooled buffer would need a
        # copy through the queue (enqueue_copy), which waits for every
        # kernel queued before it: mid-step (the targets of a loss) that
        # stalls the device while Python catches up.
        buffer = cl.Buffer(device.context, cl.mem_flags.READ_WRITE |
                           cl.mem_flags.COPY_HOST_PTR, hostbuf=array)
        note_allocation(nbytes)
        out = cls._wrap(device, buffer, shape, dtype)
        if out.dtype is INT:     # ids: keep what was sent (see ``host_ids``)
            out._host = array.copy()
            out._host.flags.writeable = False
        return out

    # --- reading ------------------------------------------------------------
    def host_ids(self):
        """The values of an int32 Tensor made by ``from_host``, from the copy
        kept when it was sent (no read back); else None. Id checks use it:
        no kernel writes int32 buffers, so the copy stays true."""
        return getattr(self, "_host", None)

    def to_host(self):
        """A numpy copy; blocks until every queued kernel has finished."""
        out = np.empty(self.shape, dtype=self.dtype)
        if out.size:
            cl.enqueue_copy(self.device.queue, out, self.buffer)
        return out

    # --- views and facts ----------------------------------------------------
    def reshape(self, *shape):
        """A view with a new shape (one entry may be -1); it shares the
        buffer, which stays in use while either lives."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = resolve_shape(self.shape, shape)      # same element count
        view = Tensor._wrap(self.device, self.buffer, shape, self.dtype)
        if self.host_ids() is not None:
            view._host = self._host.reshape(shape)
        return view

    @property
    def queue(self):
        """The device's pyopencl CommandQueue."""
        return self.device.queue

    @property
    def context(self):
        return self.device.context

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"Tensor(shape={self.shape}, dtype={self.dtype.name})"


def resolve_shape(old, new):
    """Fill in one -1 and check the element count: (2, 3) + (-1,) -> (6,)."""
    new = tuple(map(int, new))
    total = math.prod(old)
    if math.prod(new) == total and min(new, default=0) >= 0:
        return new                       # the common case: nothing to fill in
    if new.count(-1) > 1:
        raise ValueError(f"only one -1 allowed in shape {new}")
    if -1 in new:
        rest = math.prod(s for s in new if s != -1)
        if rest == 0 or total % rest:
            raise ValueError(f"cannot reshape {old} into {new}")
        new = tuple(total // rest if s == -1 else s for s in new)
    if math.prod(new) != total or any(s < 0 for s in new):
        raise ValueError(f"cannot reshape {old} ({total} values) into {new}")
    return new
