"""A weight matrix kept on the device in a GGUF block format (chapter 14).

``QuantizedWeight(queue, raw, qtype, rows, cols)`` holds a (rows, cols)
matrix W as the bytes a GGUF file stores for it: each row is cut into
blocks of 32 weights, and a block keeps a float16 scale d (Q4_1 also a
float16 minimum m) and 32 small integer codes q::

    format  bytes a block  a block                        weight c
    Q4_0    18             d, 16 bytes of 4-bit codes     d * (q_c - 8)
    Q4_1    20             d, m, 16 bytes of 4-bit codes  d * q_c + m
    Q8_0    34             d, 32 signed bytes             d * q_c
    F16     64             32 halves                      the half itself

A 4-bit block packs two codes a byte: byte j holds weight j in its low
nibble and weight j + 16 in its high one. Q4_1 thus stores a weight in 5
bits (20 bytes for 32), against 32 in float32.

On the device the bytes are regrouped, not converted: ``scales`` holds
every block's float16 numbers (d, or d and m), row by row, and ``quants``
every block's codes, so the device keeps exactly the file's bytes
(``nbytes``). Split this way, a kernel reads the codes of 8 blocks as
aligned vectors and the scales of 8 blocks with one load and one
conversion (``kernels/quant.cl``); in the file's order a block's fields
sit at 20- or 34-byte strides. F16 has no scales: ``scales`` is the
``quants`` buffer again, read as halves.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> queue = manager.default("cpu").queue
>>> w = np.linspace(-1, 1, 64, dtype=np.float32).reshape(2, 32)
>>> qw = QuantizedWeight.from_float(queue, w, "Q8_0")   # needs gguf
>>> qw
QuantizedWeight(Q8_0, rows=2, cols=32, nbytes=68)
>>> float(abs(qw.dequantize() - w).max()) < 0.01       # d = max|w| / 127
True

The kernels that read the blocks are in ``kernels/quant*.cl``; the op is
``F.quantized_matmul`` (``functional/quantized.py``), the modules
``nn.QuantizedLinear`` and ``nn.QuantizedEmbedding``.
"""

import collections
import math

import numpy as np
import pyopencl as cl

from netcl_lite.core.device import context_of
from netcl_lite.core.program import LOCAL_2D, launch, note_allocation
from netcl_lite.core.tensor import Tensor, check_fits

try:  # gguf (the `models` extra) only quantises, in ``from_float``
    from gguf import GGMLQuantizationType
    from gguf.quants import quantize as gguf_quantize
except ImportError:   # pragma: no cover - the extra is missing
    GGMLQuantizationType = gguf_quantize = None

BLOCK = 32   # weights per block, in every format here

# code: the format's number in kernels/quant_format.cl; block_bytes: a
# block's bytes in the file; scale_bytes: of those, the float16 scales
Format = collections.namedtuple("Format", "code block_bytes scale_bytes")
FORMATS = {
    "Q4_0": Format(0, 18, 2),
    "Q4_1": Format(1, 20, 4),
    "Q8_0": Format(2, 34, 2),
    "F16": Format(3, 64, 0),
}


class DeviceBytes:
    """A device buffer of raw bytes, as a kernel argument: ``launch`` passes
    ``.buffer`` to a ``__global const uchar *`` or ``half *`` parameter."""

    def __init__(self, buffer, dtype, shape):
        self.buffer = buffer
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)

    def __repr__(self):
        return f"DeviceBytes({self.dtype.name}, shape={self.shape})"


def _check_layout(raw, qtype, rows, cols):
    """The bytes as a flat uint8 array, or a ValueError naming what is
    wrong: the type, the sizes, or the byte count."""
    if qtype not in FORMATS:
        raise ValueError(f"QuantizedWeight: unknown type {qtype!r}; supported: "
                         f"{', '.join(FORMATS)} (F32 and BF16 weights stay "
                         "float32 parameters)")
    for name, n in (("rows", rows), ("cols", cols)):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"QuantizedWeight: {name} must be a positive int, "
                             f"got {n!r}")
    if cols % BLOCK:
        raise ValueError(f"QuantizedWeight: cols = {cols} is not a multiple of "
                         f"{BLOCK}, the block size of {qtype}")
    if not isinstance(raw, np.ndarray):
        raise ValueError(f"QuantizedWeight: raw must be a numpy array of the "
                         f"tensor's bytes, got {type(raw).__name__}")
    raw = np.ascontiguousarray(raw).reshape(-1).view(np.uint8)
    fmt = FORMATS[qtype]
    want = rows * (cols // BLOCK) * fmt.block_bytes
    if raw.size != want:
        raise ValueError(
            f"QuantizedWeight: {qtype} ({rows}, {cols}) takes {want} bytes "
            f"({rows} x {cols // BLOCK} blocks of {fmt.block_bytes}), raw has "
            f"{raw.size}")
    return raw


class QuantizedWeight:
    """A (rows, cols) weight matrix on the device in a GGUF format.

    ``raw``: the tensor's bytes exactly as the GGUF file stores them (any
    numpy array, viewed as bytes: ``GGUFReader(path).tensors[i].data``);
    ``qtype``: "Q4_0", "Q4_1", "Q8_0" or "F16". The file's numpy view may
    be a memory map: the bytes are copied to the device here, so the map
    can be released afterwards.
    """

    def __init__(self, queue, raw, qtype, rows, cols):
        if not isinstance(queue, cl.CommandQueue):
            raise ValueError(f"QuantizedWeight: expected a pyopencl "
                             f"CommandQueue, got {type(queue).__name__}")
        raw = _check_layout(raw, qtype, rows, cols)
        fmt = FORMATS[qtype]
        self.queue, self.qtype, self.code = queue, qtype, fmt.code
        self.rows, self.cols = int(rows), int(cols)
        nb = self.cols // BLOCK
        blocks = raw.reshape(self.rows * nb, fmt.block_bytes)   # (blocks, bytes)
        quants = blocks[:, fmt.scale_bytes:]                     # the codes
        self.quants = self._upload(quants, np.uint8, (self.rows, nb,
                                                      quants.shape[1]))
        if fmt.scale_bytes:                       # d (Q4_1: d, m) of each block
            scales = blocks[:, :fmt.scale_bytes]
            self.scales = self._upload(scales, np.float16,
                                       (self.rows, nb, fmt.scale_bytes // 2))
        else:   # F16: no scales; the kernels get the halves twice, as halves
            self.scales = DeviceBytes(self.quants.buffer, np.float16,
                                      (self.rows, self.cols))
        self.nbytes = raw.size

    def _upload(self, array, dtype, shape):
        """One device buffer holding the bytes of ``array`` (n, width),
        contiguous. They are copied straight into the mapped buffer: no
        contiguous copy on the host first, whose memory (up to 30 MB for
        a model's embedding) the allocator would keep after it is freed."""
        nbytes = array.size
        check_fits(self.queue, nbytes,
                   f"a {self.qtype} weight of shape ({self.rows}, {self.cols})")
        buffer = cl.Buffer(context_of(self.queue), cl.mem_flags.READ_ONLY,
                           nbytes)
        mapped, _ = cl.enqueue_map_buffer(
            self.queue, buffer, cl.map_flags.WRITE_INVALIDATE_REGION, 0,
            array.shape, np.uint8)
        mapped[...] = array
        mapped.base.release(self.queue)        # unmapped: kernels may read it
        note_allocation(nbytes)
        return DeviceBytes(buffer, dtype, shape)

    @classmethod
    def from_float(cls, queue, w, qtype):
        """Quantise a float (rows, cols) array with ``gguf.quants.quantize``
        (llama.cpp's rounding), e.g. for a trained model or a test."""
        if gguf_quantize is None:
            raise ValueError("QuantizedWeight.from_float needs the gguf "
                             "package: pip install 'netcl_lite[models]'")
        w = np.asarray(w, dtype=np.float32)
        if w.ndim != 2:
            raise ValueError(f"QuantizedWeight.from_float: w must be (rows, "
                             f"cols), got shape {w.shape}")
        if qtype not in FORMATS:
            raise ValueError(f"QuantizedWeight.from_float: unknown type "
                             f"{qtype!r}; supported: {', '.join(FORMATS)}")
        if w.shape[1] % BLOCK:
            raise ValueError(f"QuantizedWeight.from_float: cols = {w.shape[1]} "
                             f"is not a multiple of {BLOCK}")
        if not np.isfinite(w).all():
            raise ValueError("QuantizedWeight.from_float: w has inf or NaN")
        raw = gguf_quantize(w, GGMLQuantizationType[qtype])   # (rows, bytes)
        return cls(queue, raw, qtype, *w.shape)

    def dequantize(self):
        """W as a numpy float32 (rows, cols) array, decoded on the device by
        the simple kernel (``quant_simple.cl: quant_dequantize``): equal to
        ``gguf.quants.dequantize`` of the same bytes, bit for bit."""
        out = Tensor.empty(self.queue, (self.rows, self.cols))
        launch(self.queue, "quant_simple", "quant_dequantize",
               (self.cols, self.rows), LOCAL_2D, self.scales, self.quants, out,
               self.code, self.rows, self.cols)
        return out.to_host()

    @property
    def shape(self):
        return (self.rows, self.cols)

    @property
    def size(self):
        return math.prod(self.shape)

    def __repr__(self):
        return (f"QuantizedWeight({self.qtype}, rows={self.rows}, "
                f"cols={self.cols}, nbytes={self.nbytes})")
