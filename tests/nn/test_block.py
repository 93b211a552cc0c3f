"""DecoderBlock, RMSNorm and SwiGLU against float64 numpy, and the block's
gradient against finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl_lite.autograd as ag
import netcl_lite.functional as F
import numpy_ref as ref
from netcl_lite.core.tensor import Tensor
from netcl_lite.nn import DecoderBlock, RMSNorm, SwiGLU
from numpy_ref.decoder import decoder_block, swiglu


def host_params(module):
    return {n: p.value.to_host().astype(np.float64)
            for n, p in module.named_parameters()}


def perturb_norm_gains(queue, module, rng):
    """Gains start at 1; random ones make the test see every weight."""
    for name, p in module.named_parameters():
        if name.endswith("norm.weight"):
            p.value = Tensor.from_host(queue, 1 + 0.3 * rng.standard_normal(p.shape))


def test_rms_norm_module(queue, rng):
    norm = RMSNorm(queue, 13, eps=1e-5)
    x = rng.standard_normal((2, 37, 13))
    got = norm(Tensor.from_host(queue, x)).value.to_host()
    np.testing.assert_allclose(got, ref.rms_norm(x, np.ones(13), 1e-5), atol=1e-5)
    assert [n for n, _ in norm.named_parameters()] == ["weight"]
    with pytest.raises(ValueError, match="dim must be a positive integer, got 0"):
        RMSNorm(queue, 0)


def test_swiglu_module(queue, rng):
    ffn = SwiGLU(queue, 10, 27, seed=4)
    x = rng.standard_normal((3, 1, 10))
    p = host_params(ffn)
    got = ffn(Tensor.from_host(queue, x)).value.to_host()
    want = swiglu(x, p["w_gate"], p["w_up"], p["w_down"])
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    assert [n for n, _ in ffn.named_parameters()] == ["w_gate", "w_up", "w_down"]
    with pytest.raises(ValueError, match="hidden_dim must be a positive integer"):
        SwiGLU(queue, 10, -1)
    with pytest.raises(ValueError, match=r"last dim 10, got input shape \(3, 9\)"):
        ffn(Tensor.from_host(queue, np.zeros((3, 9))))


@pytest.mark.parametrize("B,S,D,H,HKV,hidden", [
    (1, 1, 8, 2, 2, 16),       # one token
    (2, 37, 24, 4, 2, 40),     # S = 37, GQA
    (3, 5, 12, 3, 1, 13),      # one kv head, odd hidden
])
def test_block_matches_numpy(queue, rng, B, S, D, H, HKV, hidden):
    block = DecoderBlock(queue, D, H, HKV, max_seq_len=64, hidden_dim=hidden,
                         seed=5)
    perturb_norm_gains(queue, block, rng)
    x = rng.standard_normal((B, S, D))
    got = block(Tensor.from_host(queue, x)).value.to_host()
    want = decoder_block(x, host_params(block), H, HKV)
    np.testing.assert_allclose(got, want, atol=5e-5, rtol=1e-4)


@settings(max_examples=10, deadline=None)
@given(B=st.integers(1, 3), S=st.integers(1, 20), d_k=st.sampled_from([2, 4, 6]),
       HKV=st.integers(1, 2), rep=st.integers(1, 3), hidden=st.integers(1, 30),
       seed=st.integers(0, 99))
def test_block_property(queue, B, S, d_k, HKV, rep, hidden, seed):
    rng = np.random.default_rng(seed)
    H = HKV * rep
    block = DecoderBlock(queue, H * d_k, H, HKV, max_seq_len=32, hidden_dim=hidden,
                         seed=seed)
    x = rng.standard_normal((B, S, H * d_k))
    got = block(Tensor.from_host(queue, x)).value.to_host()
    want = decoder_block(x, host_params(block), H, HKV)
    np.testing.assert_allclose(got, want, atol=5e-5, rtol=1e-4)


def test_block_gradient_finite_differences(queue, rng):
    """d/d(x and every weight) of sum(block(x) * w), checked along a random
    direction against (1) central differences of the float64 numpy block,
    (2) central differences of the kernels themselves (as tests/gradcheck.py).
    """
    B, S, D, H, HKV, hidden = 2, 5, 12, 3, 1, 10
    block = DecoderBlock(queue, D, H, HKV, max_seq_len=16, hidden_dim=hidden,
                         seed=2)
    perturb_norm_gains(queue, block, rng)
    x0 = rng.standard_normal((B, S, D))
    w = rng.standard_normal((B, S, D))
    p0 = host_params(block)

    def run(x, params, grad=False):
        for name, p in block.named_parameters():
            p.value = Tensor.from_host(queue, params[name])
        with ag.Tape() as tape:
            xn = ag.tensor(Tensor.from_host(queue, x))
            loss = F.sum(F.mul(block(xn), Tensor.from_host(queue, w)))
        if not grad:
            return float(loss.value.to_host())
        block.zero_grad()
        tape.backward(loss)
        grads = {"x": xn.grad.to_host()}
        grads.update({n: p.grad.to_host() for n, p in block.named_parameters()})
        return grads

    def ref_loss(x, params):
        return float(np.sum(decoder_block(x, params, H, HKV) * w))

    grads = run(x0, p0, grad=True)
    assert set(grads) == {"x", *p0}
    for name, g in grads.items():
        v = rng.standard_normal(g.shape)

        def shifted(f, h):
            x, p = x0, dict(p0)
            if name == "x":
                x = x0 + h * v
            else:
                p[name] = p0[name] + h * v
            return f(x, p)

        got = float(np.sum(g * v))
        fd_ref = (shifted(ref_loss, 1e-6) - shifted(ref_loss, -1e-6)) / 2e-6
        assert abs(got - fd_ref) < 1e-3 * max(1.0, abs(fd_ref)), (name, got, fd_ref)
        fd_dev = (shifted(run, 1e-2) - shifted(run, -1e-2)) / 2e-2
        assert abs(got - fd_dev) < 2e-2 * max(1.0, abs(fd_dev)), (name, got, fd_dev)


def test_block_bad_input_fails_before_any_kernel(queue):
    block = DecoderBlock(queue, 16, 4, 2, max_seq_len=8, hidden_dim=8)
    with ag.Tape() as tape:
        with pytest.raises(ValueError, match=r"\(B, S, 16\), got \(1, 3, 12\)"):
            block(Tensor.from_host(queue, np.zeros((1, 3, 12))))
        with pytest.raises(ValueError, match="max_seq_len 8"):
            block(Tensor.from_host(queue, np.zeros((1, 9, 16))))
    assert tape.records == []
    with pytest.raises(ValueError, match="n_heads 4 .* n_kv_heads 3"):
        DecoderBlock(queue, 16, 4, 3, max_seq_len=8, hidden_dim=8)
