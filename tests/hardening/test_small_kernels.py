"""Every kernel file once, forward and backward, at small shapes.

These run on any device like every other test, and they are the bulk of the
subset that tests/test_oclgrind.py runs on the Oclgrind simulator (listed in
tests/oclgrind.txt), which interprets kernels about 1000x slower: shapes
stay tiny, but cross the block sizes the kernels use (64 keys per flash
attention block, a 6 x 16 matmul register tile, 64 work-items per group).
"""

import numpy as np
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import run_op
from netcl_lite.core.tensor import Tensor
from netcl_lite.optim import AdamW, clip_grad_norm

ATOL = dict(rtol=1e-4, atol=1e-4)


def close(got, want, **tol):
    np.testing.assert_allclose(got, want, **{**ATOL, **tol})


def check(queue, rng, op, reference, vjp, arrays, **tol):
    """Forward and the vector-Jacobian product against numpy."""
    want = reference(*arrays)
    w = rng.standard_normal(want.shape)
    got, grads = run_op(queue, op, arrays, w,
                        grad_mask=[a.dtype.kind == "f" for a in arrays])
    close(got, want, **tol)
    for g, wg in zip(grads, vjp(*arrays, w)):
        if g is not None:
            close(g, wg, **tol)


def test_elementwise_and_sum(queue, rng):
    a, b = rng.standard_normal((2, 70)), rng.standard_normal((2, 70))
    check(queue, rng, F.add, ref.add, ref.add_vjp, [a, b])
    check(queue, rng, F.mul, ref.mul, ref.mul_vjp, [a, b])
    got, (g,) = run_op(queue, lambda x: F.sum(F.scale(x, 3.0)), [a], np.ones(()))
    close(got, 3 * a.sum())
    close(g, np.full(a.shape, 3.0))


@pytest.mark.parametrize("kernel", ["simple", "tiled"])
def test_matmul_both_kernels(queue, rng, kernel):
    a, b = rng.standard_normal((2, 13, 9)), rng.standard_normal((2, 9, 35))
    check(queue, rng, lambda x, y: F.matmul(x, y, kernel=kernel), ref.matmul,
          ref.matmul_vjp, [a, b])


@pytest.mark.parametrize("causal", [False, True])
def test_softmax(queue, rng, causal):
    x = rng.standard_normal((2, 5, 7))
    check(queue, rng, lambda t: F.softmax(t, causal=causal),
          lambda t: ref.softmax(t, causal), lambda t, g: ref.softmax_vjp(t, g, causal),
          [x])


def test_cross_entropy(queue, rng):
    logits = rng.standard_normal((2, 3, 70))
    targets = rng.integers(0, 70, size=(2, 3))
    check(queue, rng, F.cross_entropy, ref.cross_entropy, ref.cross_entropy_vjp,
          [logits, targets])


def test_embedding(queue, rng):
    table, ids = rng.standard_normal((11, 6)), rng.integers(0, 11, size=(3, 9))
    check(queue, rng, F.embedding, ref.embedding, ref.embedding_vjp, [table, ids])


def test_rms_norm_silu_rope(queue, rng):
    x, w = rng.standard_normal((2, 5, 12)), rng.standard_normal(12)
    check(queue, rng, F.rms_norm, ref.rms_norm, ref.rms_norm_vjp, [x, w])
    check(queue, rng, F.silu, ref.silu, ref.silu_vjp, [x])
    x = rng.standard_normal((2, 3, 7, 8))
    check(queue, rng, lambda t: F.rope(t, offset=5),
          lambda t: ref.rope(t, offset=5), lambda t, g: ref.rope_vjp(t, g, offset=5),
          [x])


def test_transpose_and_repeat_kv(queue, rng):
    x = rng.standard_normal((2, 3, 5, 4))
    check(queue, rng, lambda t: F.transpose(t, 1, 2),
          lambda t: ref.transpose(t, 1, 2),
          lambda t, g: ref.transpose_vjp(t, g, 1, 2), [x])
    check(queue, rng, lambda t: F.repeat_kv(t, 3), lambda t: ref.repeat_kv(t, 3),
          lambda t, g: ref.repeat_kv_vjp(t, 3, g), [x])


def gqa(x, n_rep):                               # (B, HKV, S, d) -> (B, H, S, d)
    return np.repeat(x, n_rep, axis=1)


@pytest.mark.parametrize("causal", [True, False])
def test_flash_attention_two_key_blocks(queue, rng, causal):
    """S = 70 crosses the 64-key block; 4 query heads read 2 kv heads."""
    q = rng.standard_normal((1, 4, 70, 8))
    k, v = rng.standard_normal((2, 1, 2, 70, 8))
    g = rng.standard_normal((1, 4, 70, 8))
    got, grads = run_op(queue, lambda *t: F.flash_attention(*t, causal=causal),
                        [q, k, v], g)
    close(got, ref.scaled_dot_product_attention(q, gqa(k, 2), gqa(v, 2), causal))
    want = ref.scaled_dot_product_attention_vjp(q, gqa(k, 2), gqa(v, 2), g, causal)
    fold = lambda x: x.reshape(1, 2, 2, 70, 8).sum(axis=2)  # noqa: E731
    for got_g, want_g in zip(grads, [want[0], fold(want[1]), fold(want[2])]):
        close(got_g, want_g)


def test_kv_cache_concat(queue, rng):
    a = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)   # (B, HKV, S, d_k)
    b = rng.standard_normal((2, 3, 2, 4)).astype(np.float32)
    got = F.concat(Tensor.from_host(queue, a), Tensor.from_host(queue, b), axis=2)
    got = got.value
    np.testing.assert_array_equal(got.to_host(), np.concatenate([a, b], axis=2))


def test_adamw_and_clip(queue, rng):
    p0, grad = rng.standard_normal((2, 70)), rng.standard_normal((2, 70))
    p = ag.tensor(Tensor.from_host(queue, p0))
    p.grad = Tensor.from_host(queue, grad)
    norm = float(clip_grad_norm([p], 1.0))
    close(norm, np.linalg.norm(grad), rtol=1e-5)
    clipped = grad / np.linalg.norm(grad)
    close(p.grad.to_host(), clipped, rtol=1e-5, atol=1e-6)
    AdamW([p], lr=0.1, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0).step()
    # the first AdamW step moves every weight by lr * sign(grad)
    close(p.value.to_host(), p0 - 0.1 * np.sign(clipped), rtol=1e-5, atol=1e-5)


def test_decoder_training_step(queue):
    """One step of a one-layer decoder: every kernel of training, together."""
    from netcl_lite.nn import DecoderConfig, DecoderLM
    model = DecoderLM(queue, DecoderConfig(vocab_size=20, dim=16, n_layers=1,
                                           n_heads=4, n_kv_heads=2,
                                           max_seq_len=8, hidden_dim=24))
    opt = AdamW(model.parameters(), lr=1e-2)
    ids = np.arange(14).reshape(2, 7) % 20
    losses = []
    for _ in range(2):
        with ag.Tape() as tape:
            loss = model.loss(ids, (ids + 1) % 20)
        opt.zero_grad()
        tape.backward(loss)
        clip_grad_norm(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.value.to_host()))
    assert np.isfinite(losses).all() and losses[1] < losses[0], losses
