import numpy as np
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional as F
from netcl_lite.core.tensor import Tensor
from netcl_lite.nn import Linear, MultiHeadAttention, RotaryAttention


def np_rope(x, base=10000.0, offset=0):
    """x (..., S, d): rotate pairs (2i, 2i+1) at position offset + row."""
    S, d = x.shape[-2:]
    theta = base ** (-np.arange(0, d, 2) / d)             # (d/2,)
    angle = (offset + np.arange(S))[:, None] * theta      # (S, d/2)
    cos, sin = np.cos(angle), np.sin(angle)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


def np_attention(module, x, rotary, offset=0):
    """The whole module in float64 numpy, head by head, with explicit loops."""
    p = {n: w.value.to_host().astype(np.float64) for n, w in
         module.named_parameters()}
    B, S, D = x.shape
    H, HKV, d_k = module.n_heads, module.n_kv_heads, module.head_dim
    q = (x @ p["wq"]).reshape(B, S, H, d_k).transpose(0, 2, 1, 3)
    k = (x @ p["wk"]).reshape(B, S, HKV, d_k).transpose(0, 2, 1, 3)
    v = (x @ p["wv"]).reshape(B, S, HKV, d_k).transpose(0, 2, 1, 3)
    if rotary:
        q, k = np_rope(q, module.base, offset), np_rope(k, module.base, offset)
    out = np.zeros((B, H, S, d_k))
    for b in range(B):
        for h in range(H):
            kv = h // (H // HKV)
            s = q[b, h] @ k[b, kv].T / np.sqrt(d_k)
            if module.causal:
                s = np.where(np.tril(np.ones((S, S))) > 0, s, -np.inf)
            a = np.exp(s - s.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            out[b, h] = a @ v[b, kv]
    return out.transpose(0, 2, 1, 3).reshape(B, S, H * d_k) @ p["wo"]


@pytest.mark.parametrize("B,S,D,H,HKV", [(1, 1, 8, 2, 2), (2, 37, 24, 4, 2),
                                          (2, 5, 12, 3, 1)])
def test_rotary_attention_matches_numpy(queue, rng, B, S, D, H, HKV):
    attn = RotaryAttention(queue, D, H, HKV, max_seq_len=64, seed=3)
    x = rng.standard_normal((B, S, D))
    got = attn(Tensor.from_host(queue, x)).value.to_host()
    np.testing.assert_allclose(got, np_attention(attn, x, True), atol=2e-5)


def test_multi_head_attention_matches_numpy(queue, rng):
    mha = MultiHeadAttention(queue, 20, 4, seed=1)
    x = rng.standard_normal((2, 9, 20))
    got = mha(Tensor.from_host(queue, x)).value.to_host()
    np.testing.assert_allclose(got, np_attention(mha, x, False), atol=2e-5)


def test_gqa_equals_mha_with_repeated_kv_weights(queue, rng):
    D, H, HKV, d_k = 32, 4, 2, 8
    gqa = RotaryAttention(queue, D, H, HKV, max_seq_len=32, seed=5)
    mha = RotaryAttention(queue, D, H, H, max_seq_len=32, seed=6)
    for name in ("wq", "wo"):
        getattr(mha, name).value = getattr(gqa, name).value
    for name in ("wk", "wv"):
        w = getattr(gqa, name).value.to_host().reshape(D, HKV, d_k)
        w = np.repeat(w, H // HKV, axis=1).reshape(D, H * d_k)  # head h <- h//2
        getattr(mha, name).value = Tensor.from_host(queue, w)
    x = Tensor.from_host(queue, rng.standard_normal((2, 11, D)))
    np.testing.assert_allclose(gqa(x).value.to_host(), mha(x).value.to_host(),
                               atol=1e-5)


def test_rotary_attention_gradients_match_finite_differences(queue, rng):
    attn = RotaryAttention(queue, 12, 3, 1, max_seq_len=16, seed=2)
    x0 = rng.standard_normal((2, 5, 12))
    w = rng.standard_normal((2, 5, 12))

    def loss_of(x, params):
        for name, value in params.items():
            getattr(attn, name).value = Tensor.from_host(queue, value)
        with ag.Tape() as tape:
            xn = ag.tensor(Tensor.from_host(queue, x))
            loss = F.sum(F.mul(attn(xn), Tensor.from_host(queue, w)))
        return loss, xn, tape

    p0 = {n: p.value.to_host().astype(np.float64)
          for n, p in attn.named_parameters()}
    loss, xn, tape = loss_of(x0, p0)
    attn.zero_grad()
    tape.backward(loss)
    grads = {"x": xn.grad.to_host()}
    grads.update({n: p.grad.to_host() for n, p in attn.named_parameters()})
    h = 1e-2
    for name, g in grads.items():
        v = rng.standard_normal(g.shape)

        def f(sign):
            x, p = x0, dict(p0)
            if name == "x":
                x = x0 + sign * h * v
            else:
                p[name] = p0[name] + sign * h * v
            return float(loss_of(x, p)[0].value.to_host())

        fd = (f(1) - f(-1)) / (2 * h)
        assert abs(np.sum(g * v) - fd) < 2e-2 * max(1.0, abs(fd)), (name, fd)


def test_bad_configurations_name_the_numbers(queue):
    with pytest.raises(ValueError, match=r"dim 250 .* n_heads 4"):
        RotaryAttention(queue, 250, 4, 4, 16)
    with pytest.raises(ValueError, match=r"n_heads 4 .* n_kv_heads 3"):
        RotaryAttention(queue, 256, 4, 3, 16)
    with pytest.raises(ValueError, match="head dim must be even"):
        RotaryAttention(queue, 12, 4, 4, 16)


def test_too_long_sequence_fails_before_any_kernel(queue):
    attn = RotaryAttention(queue, 16, 2, 2, max_seq_len=8)
    before = attn.wq.value.to_host()
    x = Tensor.from_host(queue, np.zeros((1, 9, 16)))
    with ag.Tape() as tape:
        with pytest.raises(ValueError, match=r"max_seq_len 8 \(S = 9"):
            attn(x)
        with pytest.raises(ValueError, match=r"\(B, S, 16\), got \(1, 9, 15\)"):
            attn(Tensor.from_host(queue, np.zeros((1, 9, 15))))
    assert tape.records == []
    np.testing.assert_array_equal(attn.wq.value.to_host(), before)


def test_initialisation_is_seeded(queue):
    a = RotaryAttention(queue, 16, 2, 1, 8, seed=7)
    b = RotaryAttention(queue, 16, 2, 1, 8, seed=7)
    c = RotaryAttention(queue, 16, 2, 1, 8, seed=8)
    assert [n for n, _ in a.named_parameters()] == ["wq", "wk", "wv", "wo"]
    assert a.wk.shape == (16, 8) and a.wo.shape == (16, 16)
    np.testing.assert_array_equal(a.wq.value.to_host(), b.wq.value.to_host())
    assert not np.array_equal(a.wq.value.to_host(), c.wq.value.to_host())
    lin = Linear(queue, 3, 5, seed=1)
    assert lin.weight.shape == (3, 5)
