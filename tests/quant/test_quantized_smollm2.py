"""SmolLM2-135M-Instruct's own tensors (the ``smollm2_path`` fixture):
every Q4_1 and Q8_0 tensor of the file, decoded on the device, equals
``gguf.quants.dequantize`` of the same bytes bit for bit, and the
decoding kernels multiply them as numpy does."""

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

import netcl_lite.functional as F  # noqa: E402
from netcl_lite.core.quantized import QuantizedWeight  # noqa: E402
from netcl_lite.core.tensor import Tensor  # noqa: E402
from netcl_lite.functional.quantized import dequantized_rows  # noqa: E402


@pytest.fixture(scope="module")
def quantized_tensors(smollm2_path):
    """(name, type, rows, cols, bytes) of every Q4_1 and Q8_0 tensor (the
    reader parses the tokenizer's 100K strings too: read the file once)."""
    reader = gguf.GGUFReader(smollm2_path)
    found = []
    for t in reader.tensors:
        if t.tensor_type.name in ("Q4_1", "Q8_0"):
            cols, rows = (int(n) for n in t.shape)   # the file lists cols first
            found.append((t.name, t.tensor_type, rows, cols, t.data))
    return found


def test_every_quantized_tensor_decodes_bit_for_bit(queue, quantized_tensors):
    seen = {"Q4_1": 0, "Q8_0": 0}
    for name, gtype, rows, cols, data in quantized_tensors:
        want = gguf.quants.dequantize(data, gtype)         # (rows, cols)
        w = QuantizedWeight(queue, data, gtype.name, rows, cols)
        assert w.nbytes == data.nbytes, name
        got = w.dequantize()                               # the simple kernel
        assert got.shape == want.shape == (rows, cols), name
        assert np.array_equal(got, want), name
        fast = dequantized_rows(w, 0, rows).to_host()      # prefill's kernel
        assert np.array_equal(fast, want), name
        seen[gtype.name] += 1
    assert seen == {"Q4_1": 210, "Q8_0": 1}


def test_decoding_products_on_real_weights(queue, rng, quantized_tensors):
    """One token through a layer's down projection (Q4_1) and the tied head
    (Q8_0), against numpy's product of the dequantised weights."""
    wanted = {"blk.0.ffn_down.weight", "token_embd.weight"}
    for name, gtype, rows, cols, data in quantized_tensors:
        if name not in wanted:
            continue
        W = gguf.quants.dequantize(data, gtype)            # float32
        w = QuantizedWeight(queue, data, gtype.name, rows, cols)
        x = rng.standard_normal((1, cols)).astype(np.float32)
        y = F.quantized_matmul(Tensor.from_host(queue, x), w).value.to_host()
        want = x @ W.T
        scale = (np.abs(W) @ np.abs(x[0]))[None]   # the size of each sum's terms
        assert np.all(np.abs(y - want) <= 1e-6 * scale), name
        wanted.discard(name)
    assert not wanted
