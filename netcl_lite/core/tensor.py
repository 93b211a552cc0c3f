"""A ``Tensor`` is an OpenCL buffer plus a shape and a dtype.

Only two dtypes exist: float32 for values and int32 for token ids. Tensors
are always contiguous (row-major), so ``reshape`` is a free view.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> queue = manager.default("cpu").queue
>>> t = Tensor.from_host(queue, np.arange(6).reshape(2, 3))  # int64 -> int32
>>> t.shape, t.dtype
((2, 3), dtype('int32'))
>>> t.reshape(3, 2).to_host()
array([[0, 1],
       [2, 3],
       [4, 5]], dtype=int32)
"""

import math

import numpy as np
import pyopencl as cl

FLOAT = np.dtype(np.float32)
INT = np.dtype(np.int32)
I32 = np.iinfo(np.int32)


def _to_device_dtype(array):
    """Cast float64 -> float32 and int64 -> int32 (when every value fits)."""
    kind = array.dtype.kind
    if array.dtype in (FLOAT, INT):
        return array
    if kind == "f":
        return array.astype(FLOAT)
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


class Tensor:
    """A contiguous float32 or int32 array that lives on an OpenCL device."""

    def __init__(self, queue, buffer, shape, dtype):
        self.queue = queue
        self.buffer = buffer
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    # --- creation -----------------------------------------------------------
    @classmethod
    def empty(cls, queue, shape, dtype=FLOAT):
        """Uninitialised storage (at least 4 bytes: OpenCL forbids 0)."""
        shape = tuple(int(s) for s in shape)
        if any(s < 0 for s in shape):
            raise ValueError(f"negative size in shape {shape}")
        dtype = np.dtype(dtype)
        if dtype not in (FLOAT, INT):
            raise ValueError(f"unsupported dtype {dtype}: use float32 or int32")
        nbytes = max(math.prod(shape) * dtype.itemsize, 4)
        buffer = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, nbytes)
        return cls(queue, buffer, shape, dtype)

    @classmethod
    def zeros(cls, queue, shape, dtype=FLOAT):
        out = cls.empty(queue, shape, dtype)
        pattern = np.zeros(1, dtype=out.dtype)
        cl.enqueue_fill_buffer(queue, out.buffer, pattern, 0, out.buffer.size)
        return out

    @classmethod
    def from_host(cls, queue, array):
        """Copy a numpy array (or anything ``np.asarray`` takes) to the device."""
        if not isinstance(queue, cl.CommandQueue):
            raise ValueError(
                f"expected a pyopencl CommandQueue, got {type(queue).__name__}"
            )
        array = np.asarray(_to_device_dtype(np.asarray(array)), order="C")
        out = cls.empty(queue, array.shape, array.dtype)
        if array.size:
            cl.enqueue_copy(queue, out.buffer, array)
        return out

    # --- reading ------------------------------------------------------------
    def to_host(self):
        """A numpy copy; blocks until every queued kernel has finished."""
        out = np.empty(self.shape, dtype=self.dtype)
        if out.size:
            cl.enqueue_copy(self.queue, out, self.buffer)
        return out

    # --- views and facts ----------------------------------------------------
    def reshape(self, *shape):
        """A view with a new shape (one entry may be -1)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = resolve_shape(self.shape, shape)
        return Tensor(self.queue, self.buffer, shape, self.dtype)

    @property
    def context(self):
        return self.queue.context

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
    new = tuple(int(s) for s in new)
    total = math.prod(old)
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
