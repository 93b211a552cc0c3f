"""nn.QuantizedLinear and nn.QuantizedEmbedding: against numpy, no
parameters, a tied head over one set of blocks, and their refusals."""

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

import netcl_lite.autograd as ag  # noqa: E402
import netcl_lite.functional as F  # noqa: E402
from netcl_lite.core.program import trace  # noqa: E402
from netcl_lite.core.quantized import QuantizedWeight  # noqa: E402
from netcl_lite.core.tensor import Tensor  # noqa: E402
from netcl_lite.nn import (Module, QuantizedEmbedding,  # noqa: E402
                           QuantizedLinear, RMSNorm)
from netcl_lite.optim import AdamW  # noqa: E402
from numpy_ref.quantized import dequantize  # noqa: E402


def table(queue, rng, qtype, rows, cols):
    w = rng.standard_normal((rows, cols)).astype(np.float32)
    raw = gguf.quants.quantize(w, gguf.GGMLQuantizationType[qtype])
    return (QuantizedWeight(queue, raw, qtype, rows, cols),
            dequantize(raw, qtype, rows, cols))


class TiedLM(Module):
    """Embedding, a norm and a head tied to the embedding."""

    def __init__(self, queue, weight):
        self.embed = QuantizedEmbedding(weight)
        self.norm = RMSNorm(queue, weight.cols)
        self.head = QuantizedLinear(weight)

    def forward(self, ids):
        return self.head(self.norm(self.embed(ids)))


@pytest.mark.parametrize("qtype", ["Q4_0", "Q4_1", "Q8_0", "F16"])
def test_linear_and_embedding_match_numpy(queue, rng, qtype):
    qw, W = table(queue, rng, qtype, 40, 64)           # V=40, D=64
    ids = rng.integers(0, 40, (2, 7))
    rows = QuantizedEmbedding(qw)(Tensor.from_host(queue, ids))
    np.testing.assert_array_equal(rows.value.to_host(), W[ids])  # bit for bit
    lin = QuantizedLinear(qw)
    assert (lin.d_in, lin.d_out) == (64, 40)
    x = rng.standard_normal((2, 7, 64))
    np.testing.assert_allclose(lin(Tensor.from_host(queue, x)).value.to_host(),
                               x @ W.T, atol=1e-4, rtol=1e-4)


def test_a_tied_head_shares_the_blocks_and_has_no_parameters(queue, rng):
    qw, W = table(queue, rng, "Q8_0", 50, 32)
    model = TiedLM(queue, qw)
    assert model.embed.weight is model.head.weight
    assert model.embed.weight.quants.buffer is model.head.weight.quants.buffer
    assert [name for name, _ in model.named_parameters()] == ["norm.weight"]
    assert model.embed.quantized and model.head.quantized
    assert not getattr(model.norm, "quantized", False)
    # a training step reaches the norm's weight through the quantised head
    opt = AdamW(model.parameters(), lr=1e-2)
    ids = Tensor.from_host(queue, rng.integers(0, 50, (1, 5)))
    with ag.Tape() as tape:
        loss = F.sum(model(ids))
    tape.backward(loss)
    assert model.norm.weight.grad is not None
    opt.step()


def test_the_input_gradient_flows_through_the_linear_layer(queue, rng):
    qw, W = table(queue, rng, "Q4_1", 24, 96)
    x = rng.standard_normal((3, 96))
    g = rng.standard_normal((3, 24))
    with ag.Tape() as tape:
        xn = ag.tensor(Tensor.from_host(queue, x))
        loss = F.sum(F.mul(QuantizedLinear(qw)(xn), Tensor.from_host(queue, g)))
    tape.backward(loss)
    np.testing.assert_allclose(xn.grad.to_host(), g @ W, atol=1e-4, rtol=1e-4)


def test_refusals(queue, rng):
    qw, _ = table(queue, rng, "Q4_1", 10, 32)
    with pytest.raises(ValueError, match="QuantizedLinear takes a "
                       "QuantizedWeight, got ndarray"):
        QuantizedLinear(np.zeros((10, 32)))
    with pytest.raises(ValueError, match="QuantizedEmbedding takes a "
                       "QuantizedWeight, got Node"):
        QuantizedEmbedding(ag.tensor(Tensor.from_host(queue, np.zeros((10, 32)))))
    with pytest.raises(ValueError, match="QuantizedLinear expects last dim 32"):
        QuantizedLinear(qw)(Tensor.from_host(queue, np.zeros((2, 31))))
    embed = QuantizedEmbedding(qw)
    with trace() as ran:
        with pytest.raises(ValueError, match="id 10 at flat position 1 is "
                           "outside"):
            embed(Tensor.from_host(queue, np.array([3, 10])))
        with pytest.raises(ValueError, match="ids must be int32, got float32"):
            embed(Tensor.from_host(queue, np.array([3.0])))
    assert list(ran) == []
