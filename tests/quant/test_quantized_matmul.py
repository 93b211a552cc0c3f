"""F.quantized_matmul: forward and input gradient against numpy (W
dequantised by the test's own decoder), finite differences, the fast
kernels against the simple ones, the chunked prefill, and the refusals."""

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

import netcl_lite.autograd as ag  # noqa: E402
import netcl_lite.functional as F  # noqa: E402
import netcl_lite.functional.quantized as FQ  # noqa: E402
from gradcheck import check_op  # noqa: E402
from netcl_lite.core.program import trace  # noqa: E402
from netcl_lite.core.quantized import QuantizedWeight  # noqa: E402
from netcl_lite.core.tensor import Tensor  # noqa: E402
from numpy_ref.quantized import (dequantize, quantized_matmul,  # noqa: E402
                                 quantized_matmul_vjp)

QTYPES = ["Q4_0", "Q4_1", "Q8_0", "F16"]


def weight(queue, rng, qtype, rows, cols):
    """A random QuantizedWeight and its weights as the reference decodes
    them (from the bytes, not from the device)."""
    w = rng.standard_normal((rows, cols)).astype(np.float32)
    qw = QuantizedWeight.from_float(queue, w, qtype)
    raw = gguf.quants.quantize(w, gguf.GGMLQuantizationType[qtype])
    return qw, dequantize(raw, qtype, rows, cols)


def run(queue, x, qw, g, fast=None):
    """(y, dx) on the device, as numpy."""
    with ag.Tape() as tape:
        xn = ag.tensor(Tensor.from_host(queue, x))
        y = F.quantized_matmul(xn, qw, fast=fast)
        loss = F.sum(F.mul(y, Tensor.from_host(queue, g)))
    tape.backward(loss)
    return y.value.to_host(), xn.grad.to_host()


@pytest.mark.parametrize("qtype", QTYPES)
@pytest.mark.parametrize("lead", [(1,), (3,), (2, 4), (37,)])
def test_gradcheck(queue, rng, qtype, lead):
    """Decoding shapes (1 and 3 rows: the matrix-vector kernels) and
    prefill shapes (8 and 37 rows: float32 chunks and the tuned matmul)."""
    rows, cols = 48, 96
    qw, W = weight(queue, rng, qtype, rows, cols)
    x = rng.standard_normal((*lead, cols))
    check_op(queue, lambda t: F.quantized_matmul(t, qw),
             lambda t: quantized_matmul(t, W),
             lambda t, g: quantized_matmul_vjp(t, W, g), [x])


@pytest.mark.parametrize("qtype", QTYPES)
def test_simple_kernels_gradcheck(queue, rng, qtype):
    qw, W = weight(queue, rng, qtype, 20, 64)
    x = rng.standard_normal((2, 5, 64))
    check_op(queue, lambda t: F.quantized_matmul(t, qw, fast=False),
             lambda t: quantized_matmul(t, W),
             lambda t, g: quantized_matmul_vjp(t, W, g), [x])


@pytest.mark.parametrize("qtype", QTYPES)
@pytest.mark.parametrize("rows,cols,M", [
    (70, 96, 1),      # 3 blocks a row: no step of 8 blocks, the tail only
    (64, 576, 2),     # 18 blocks: two steps of 8 and a tail of 2 (SmolLM2)
    (9, 512, 7),      # 16 blocks: steps only; the last row count below 8
    (33, 288, 9),     # prefill, one chunk
])
def test_fast_matches_simple(queue, rng, qtype, rows, cols, M):
    qw, W = weight(queue, rng, qtype, rows, cols)
    x = rng.standard_normal((M, cols)).astype(np.float32)
    g = rng.standard_normal((M, rows)).astype(np.float32)
    y_fast, dx_fast = run(queue, x, qw, g)
    y_simple, dx_simple = run(queue, x, qw, g, fast=False)
    scale_y = np.abs(x).sum(1, keepdims=True) * np.abs(W).max()
    scale_dx = np.abs(g).sum(1, keepdims=True) * np.abs(W).max()
    assert np.all(np.abs(y_fast - y_simple) <= 2e-6 * scale_y)
    assert np.all(np.abs(dx_fast - dx_simple) <= 2e-6 * scale_dx)
    np.testing.assert_allclose(y_simple, x @ W.T.astype(np.float64),
                               atol=1e-5 * scale_y.max(), rtol=0)


@pytest.mark.parametrize("qtype", ["Q4_1", "Q8_0"])
def test_prefill_in_chunks_of_rows(queue, rng, qtype, monkeypatch):
    """A weight larger than SCRATCH_BYTES is dequantised a chunk of rows at
    a time (the tied head of a real model): same products, and no float32
    copy of the whole W is ever made."""
    rows, cols, M = 200, 64, 12
    monkeypatch.setattr(FQ, "SCRATCH_BYTES", 64 * cols * 4)   # 64 rows a chunk
    assert FQ.chunk_rows(QuantizedWeight.from_float(
        queue, np.zeros((rows, cols)), qtype)) == 64
    qw, W = weight(queue, rng, qtype, rows, cols)
    x = rng.standard_normal((M, cols)).astype(np.float32)
    g = rng.standard_normal((M, rows)).astype(np.float32)
    with trace() as ran:
        y, dx = run(queue, x, qw, g)
    assert ran.count("quant.cl:quant_dequantize_blocks") == 2 * 4  # 4 chunks x 2
    assert max(ran.allocations) < rows * cols * 4
    np.testing.assert_allclose(y, x @ W.T, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(dx, g @ W, atol=1e-4, rtol=1e-4)


def test_the_rows_of_x_choose_the_kernels(queue, rng):
    qw, _ = weight(queue, rng, "Q4_1", 64, 64)
    for M, kernel in [(1, "quant.cl:quant_matvec_q4_1"),
                      (7, "quant.cl:quant_matvec_q4_1"),
                      (8, "matmul.cl:")]:
        x = Tensor.from_host(queue, rng.standard_normal((M, 64)))
        with trace() as ran:
            F.quantized_matmul(x, qw)
        assert any(k.startswith(kernel) for k in ran), (M, ran)
    with trace() as ran:
        F.quantized_matmul(x, qw, fast=False)
    assert list(ran) == ["quant_simple.cl:quant_matmul_simple"]


def test_the_weight_gets_no_gradient_and_no_float_copy(queue, rng):
    qw, W = weight(queue, rng, "Q8_0", 32, 64)
    x = rng.standard_normal((1, 64)).astype(np.float32)
    g = rng.standard_normal((1, 32)).astype(np.float32)
    with trace() as ran:
        y, dx = run(queue, x, qw, g)
    # decoding reads the blocks in both directions: no buffer of W's size
    assert all(n < 32 * 64 * 4 for n in ran.allocations)
    assert "quant.cl:quant_matvec_t" in ran
    with ag.Tape() as tape:                      # x a constant: no record
        F.quantized_matmul(Tensor.from_host(queue, x), qw)
    assert tape.records == []


def test_empty_and_one_dimensional_inputs(queue, rng):
    qw, W = weight(queue, rng, "Q4_0", 16, 32)
    x = rng.standard_normal(32)
    y = F.quantized_matmul(Tensor.from_host(queue, x), qw).value.to_host()
    np.testing.assert_allclose(y, W @ x, atol=1e-5, rtol=1e-5)
    empty = F.quantized_matmul(Tensor.empty(queue, (0, 32)), qw)
    assert empty.shape == (0, 16)


def test_bad_calls_are_refused_before_any_kernel(queue, rng):
    qw, _ = weight(queue, rng, "Q4_1", 16, 64)
    x = Tensor.from_host(queue, np.ones((2, 64)))
    cases = [
        ((Tensor.from_host(queue, np.ones((2, 32))), qw),
         r"x is \(2, 32\), its last dim must be the weight's cols = 64"),
        ((x, np.ones((16, 64))), "w must be a QuantizedWeight, got ndarray"),
        ((Tensor.from_host(queue, np.ones((2, 64), np.int32)), qw),
         "has dtype int32, need float32"),
        ((x, qw, "yes"), "fast must be None, True or False"),
    ]
    for args, message in cases:
        with trace() as ran:
            with pytest.raises(ValueError, match=message):
                F.quantized_matmul(*args)
        assert list(ran) == []
