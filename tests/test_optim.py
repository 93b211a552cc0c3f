"""AdamW, gradient clipping and the cosine schedule against numpy."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl_lite.autograd as ag
from netcl_lite.core.tensor import Tensor
from netcl_lite.optim import AdamW, clip_grad_norm, cosine_lr, grad_norm


def adamw_reference(p, grads, lr, b1, b2, eps, wd):
    """float64 AdamW (as torch.optim.AdamW), one step per gradient."""
    p = p.astype(np.float64)
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        p = p * (1 - lr * wd)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p


def leaf(queue, array):
    return ag.tensor(Tensor.from_host(queue, array))


def run_adamw(queue, p0, grads, **kw):
    p = leaf(queue, p0)
    opt = AdamW([p], **kw)
    for g in grads:
        p.grad = Tensor.from_host(queue, g)
        opt.step()
    return p.value.to_host()


@pytest.mark.parametrize("shape,wd", [((1,), 0.0), ((37, 5), 0.1), ((3, 65), 0.5),
                                      ((3, 5477), 0.1)])   # many runs, a tail
def test_adamw_matches_numpy(queue, rng, shape, wd):
    p0 = rng.standard_normal(shape).astype(np.float32)
    grads = [rng.standard_normal(shape).astype(np.float32) * s
             for s in (1.0, 1e-3, 10.0, 1.0)]
    kw = dict(lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=wd)
    got = run_adamw(queue, p0, grads, **kw)
    want = adamw_reference(p0, grads, 1e-2, 0.9, 0.95, 1e-8, wd)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 200), steps=st.integers(1, 4),
       lr=st.floats(1e-4, 1e-1), b1=st.floats(0.0, 0.99), b2=st.floats(0.5, 0.999),
       wd=st.floats(0.0, 1.0), seed=st.integers(0, 99))
def test_adamw_property(queue, n, steps, lr, b1, b2, wd, seed):
    rng = np.random.default_rng(seed)
    p0 = rng.standard_normal(n).astype(np.float32)
    grads = [rng.standard_normal(n).astype(np.float32) for _ in range(steps)]
    got = run_adamw(queue, p0, grads, lr=lr, betas=(b1, b2), weight_decay=wd)
    want = adamw_reference(p0, grads, lr, b1, b2, 1e-8, wd)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_groups_and_missing_gradients(queue, rng):
    a = leaf(queue, np.ones(3))
    b = leaf(queue, np.ones(3))
    c = leaf(queue, np.ones(2))
    opt = AdamW([{"params": [a], "weight_decay": 0.5}, {"params": [b, c]}],
                lr=0.1, weight_decay=0.0)
    for p in (a, b):
        p.grad = Tensor.from_host(queue, np.zeros(3))
    opt.step()                                   # zero gradient: only decay
    np.testing.assert_allclose(a.value.to_host(), 0.95, rtol=1e-6)
    np.testing.assert_array_equal(b.value.to_host(), 1.0)
    np.testing.assert_array_equal(c.value.to_host(), 1.0)   # no grad: untouched
    assert opt.t == 1
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_adamw_rejects_bad_settings(queue):
    p = leaf(queue, np.ones(2))
    for kw, message in [(dict(lr=-1.0), "lr"), (dict(betas=(1.0, 0.9)), "beta1"),
                        (dict(eps=0.0), "eps"), (dict(weight_decay=-0.1),
                                                 "weight_decay")]:
        with pytest.raises(ValueError, match=message):
            AdamW([p], **kw)
    with pytest.raises(ValueError, match="appears twice"):
        AdamW([p, p])
    with pytest.raises(ValueError, match="require"):
        AdamW([ag.tensor(p.value, requires_grad=False)])
    with pytest.raises(ValueError, match="no parameters"):
        AdamW([])
    opt = AdamW([p])
    p.grad = Tensor.from_host(queue, np.ones(3))
    with pytest.raises(ValueError, match=r"gradient \(3,\) does not match"):
        opt.step()
    assert opt.t == 0


def test_clip_grad_norm(queue, rng):
    gs = [rng.standard_normal(s) for s in [(5,), (37, 3), (1,), (200,), (8,),
                                           (3, 5477)]]   # 8 lanes, and tails
    ps = [leaf(queue, np.zeros(g.shape)) for g in gs]
    for p, g in zip(ps, gs):
        p.grad = Tensor.from_host(queue, g)
    total = math.sqrt(sum(float(np.sum(g * g)) for g in gs))
    assert grad_norm(ps) == pytest.approx(total, rel=1e-6)
    assert clip_grad_norm(ps, 2 * total) == pytest.approx(total, rel=1e-6)
    np.testing.assert_allclose(ps[1].grad.to_host(), gs[1], rtol=1e-6)  # untouched
    assert clip_grad_norm(ps, 1.0) == pytest.approx(total, rel=1e-6)
    assert grad_norm(ps) == pytest.approx(1.0, rel=1e-5)
    np.testing.assert_allclose(ps[3].grad.to_host(), gs[3] / total, rtol=1e-5)
    with pytest.raises(ValueError, match="max_norm must be a positive number"):
        clip_grad_norm(ps, 0.0)
    assert grad_norm([leaf(queue, np.zeros(2))]) == 0.0


def test_cosine_lr():
    lrs = [cosine_lr(s, 100, 1.0, warmup=10, min_lr=0.1) for s in range(100)]
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0)
    assert lrs[10] == pytest.approx(1.0) and lrs[-1] == pytest.approx(0.1)
    assert all(a >= b for a, b in zip(lrs[10:], lrs[11:]))
    with pytest.raises(ValueError, match="warmup"):
        cosine_lr(0, 10, 1.0, warmup=10)
