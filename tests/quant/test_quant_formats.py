"""GGUF's block formats: the numpy reference against gguf's own
dequantiser, the device's decoding against the reference (bit for bit),
and QuantizedWeight's refusals."""

import numpy as np
import pyopencl as cl
import pytest

gguf = pytest.importorskip("gguf")

from netcl_lite.core.program import LOCAL_2D, launch, trace  # noqa: E402
from netcl_lite.core.quantized import FORMATS, QuantizedWeight  # noqa: E402
from netcl_lite.core.tensor import Tensor  # noqa: E402
from netcl_lite.functional.quantized import dequantized_rows  # noqa: E402
from numpy_ref.quantized import BLOCK_BYTES, dequantize  # noqa: E402

QTYPES = ["Q4_0", "Q4_1", "Q8_0", "F16"]
# float16 values for scales and minimums: zeros of both signs, the largest
# half, the smallest normal and subnormal ones, ordinary sizes of both signs
EDGE_HALVES = np.array([0.0, -0.0, 1.0, -1.0, 65504.0, -65504.0, 6.1035e-05,
                        -6.1035e-05, 5.96e-08, 3.0e-06, 0.013, -0.0071, 0.5,
                        -2.25], np.float16)


def edge_blocks(rng, qtype, rows, cols):
    """Random bytes of a (rows, cols) tensor in ``qtype``, with every scale
    and minimum from EDGE_HALVES (random ones), and the extreme codes in
    whole blocks: nibbles 0 and 15 (bytes 0x00, 0xFF, 0x0F, 0xF0), int8
    -128 and 127."""
    if qtype == "F16":
        values = rng.choice(EDGE_HALVES, rows * cols)
        values[::3] = rng.standard_normal(values[::3].size)
        return values.astype(np.float16).view(np.uint8)
    n = rows * cols // 32
    blocks = rng.integers(0, 256, (n, BLOCK_BYTES[qtype]), dtype=np.uint8)
    n_halves = 2 if qtype == "Q4_1" else 1
    halves = rng.choice(EDGE_HALVES, (n, n_halves))
    blocks[:, :2 * n_halves] = halves.astype(np.float16).view(np.uint8)
    codes = blocks[:, 2 * n_halves:]
    extremes = [0x00, 0xFF, 0x0F, 0xF0] if qtype != "Q8_0" else [0x80, 0x7F]
    for i, byte in enumerate(extremes):
        codes[i % n] = byte
    return blocks.reshape(-1)


@pytest.mark.parametrize("qtype", QTYPES)
def test_reference_matches_gguf(rng, qtype):
    rows, cols = 40, 128
    raw = edge_blocks(rng, qtype, rows, cols)
    gtype = gguf.GGMLQuantizationType[qtype]
    want = gguf.quants.dequantize(raw.reshape(rows, -1), gtype)
    got = dequantize(raw, qtype, rows, cols)
    assert want.shape == got.shape == (rows, cols)
    np.testing.assert_array_equal(got, want)   # bit for bit (-0 == 0)
    assert np.signbit(got).sum() == np.signbit(want).sum()


@pytest.mark.parametrize("qtype", QTYPES)
@pytest.mark.parametrize("rows,cols", [(1, 32), (5, 96), (3, 288)])
def test_device_dequantizes_bit_for_bit(queue, rng, qtype, rows, cols):
    """The simple kernel (one value per work-item) and the fast one (one
    block per work-item, prefill's) both give the reference's floats."""
    raw = edge_blocks(rng, qtype, rows, cols)
    want = dequantize(raw, qtype, rows, cols)
    w = QuantizedWeight(queue, raw, qtype, rows, cols)
    np.testing.assert_array_equal(w.dequantize(), want)
    np.testing.assert_array_equal(dequantized_rows(w, 0, rows).to_host(), want)
    tail = dequantized_rows(w, rows - 1, 1).to_host()       # an offset chunk
    np.testing.assert_array_equal(tail, want[rows - 1:])


@pytest.mark.parametrize("qtype", QTYPES)
def test_from_float_quantizes_as_gguf_does(queue, rng, qtype):
    w = rng.standard_normal((6, 64)).astype(np.float32)
    w[0] = 0.0                                   # a zero row: d = 0
    raw = gguf.quants.quantize(w, gguf.GGMLQuantizationType[qtype])
    qw = QuantizedWeight.from_float(queue, w, qtype)
    np.testing.assert_array_equal(qw.dequantize(), dequantize(raw, qtype, 6, 64))
    assert (qw.rows, qw.cols, qw.qtype, qw.shape) == (6, 64, qtype, (6, 64))
    assert not qw.dequantize()[0].any()
    # the rounding error of each format, at most half a step of its grid
    step = {"Q4_0": 2 * 3.5 / 8, "Q4_1": 7.0 / 15, "Q8_0": 3.5 / 127,
            "F16": 3.5 * 2.0 ** -10}[qtype]
    assert np.abs(qw.dequantize() - w).max() <= step * 1.01


@pytest.mark.parametrize("qtype", QTYPES)
def test_the_device_keeps_the_files_bytes(queue, rng, qtype):
    rows, cols = 7, 64
    raw = edge_blocks(rng, qtype, rows, cols)
    w = QuantizedWeight(queue, raw, qtype, rows, cols)
    assert w.nbytes == raw.size == rows * cols // 32 * FORMATS[qtype].block_bytes
    buffers = {w.scales.buffer.int_ptr: w.scales.buffer.size,
               w.quants.buffer.int_ptr: w.quants.buffer.size}
    assert sum(buffers.values()) == raw.size     # F16: one buffer, no scales
    # the codes, as they sit in the file (after each block's scales)
    codes = np.empty(w.quants.buffer.size, np.uint8)
    cl.enqueue_copy(queue, codes, w.quants.buffer)
    skip = FORMATS[qtype].scale_bytes
    blocks = raw.reshape(rows * cols // 32, -1)
    np.testing.assert_array_equal(codes, blocks[:, skip:].reshape(-1))


def test_a_gguf_view_of_another_dtype_is_read_as_bytes(queue):
    halves = np.arange(64, dtype=np.float16).reshape(2, 32)  # gguf's F16 data
    w = QuantizedWeight(queue, halves, "F16", 2, 32)
    np.testing.assert_array_equal(w.dequantize(), halves.astype(np.float32))


@pytest.mark.parametrize("args,message", [
    ((np.zeros(20, np.uint8), "Q4_K", 1, 32), "unknown type 'Q4_K'"),
    ((np.zeros(20, np.uint8), "F32", 1, 32), "F32 and BF16 weights stay"),
    ((np.zeros(20, np.uint8), "Q4_1", 1, 48), "cols = 48 is not a multiple of 32"),
    ((np.zeros(21, np.uint8), "Q4_1", 1, 32), "takes 20 bytes"),
    ((np.zeros(39, np.uint8), "Q4_1", 1, 64), "raw has 39"),
    ((np.zeros(20, np.uint8), "Q4_1", 0, 32), "rows must be a positive int"),
    ((np.zeros(20, np.uint8), "Q4_1", 1.0, 32), "rows must be a positive int"),
    ((b"\0" * 20, "Q4_1", 1, 32), "raw must be a numpy array"),
])
def test_bad_weights_are_refused_before_any_kernel(queue, args, message):
    with trace() as ran:
        with pytest.raises(ValueError, match=message):
            QuantizedWeight(queue, *args)
    assert list(ran) == [] and ran.allocations == []


def test_bad_queue_and_from_float_refusals(queue):
    with pytest.raises(ValueError, match="expected a pyopencl CommandQueue"):
        QuantizedWeight("queue", np.zeros(20, np.uint8), "Q4_1", 1, 32)
    with pytest.raises(ValueError, match=r"must be \(rows, cols\)"):
        QuantizedWeight.from_float(queue, np.zeros(32), "Q8_0")
    with pytest.raises(ValueError, match="cols = 40 is not a multiple"):
        QuantizedWeight.from_float(queue, np.zeros((2, 40)), "Q8_0")
    with pytest.raises(ValueError, match="unknown type 'Q5_0'"):
        QuantizedWeight.from_float(queue, np.zeros((2, 32)), "Q5_0")
    with pytest.raises(ValueError, match="inf or NaN"):
        QuantizedWeight.from_float(queue, np.full((2, 32), np.nan), "Q8_0")


def test_launch_checks_the_raw_buffers(queue):
    """The kernels' half and uchar buffers are checked like Tensors: the
    codes handed where the scales go are refused before the launch."""
    w = QuantizedWeight.from_float(queue, np.ones((2, 32)), "Q4_1")
    out = Tensor.empty(queue, (2, 32))
    with pytest.raises(ValueError, match="argument 1 'scales' is a __global "
                       "half buffer: pass the float16 scales of a "
                       "QuantizedWeight"):
        launch(queue, "quant_simple", "quant_dequantize", (32, 2), LOCAL_2D,
               w.quants, w.quants, out, w.code, 2, 32)
    with pytest.raises(ValueError, match="argument 2 'quants' is a __global "
                       "uchar buffer: pass the uint8 codes"):
        launch(queue, "quant_simple", "quant_dequantize", (32, 2), LOCAL_2D,
               w.scales, out, out, w.code, 2, 32)
