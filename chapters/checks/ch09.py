"""Checks for chapter 09, the capstone decoder: ``check_k(your_function)``.

Each check runs your function on a few inputs, compares the result with an
independent computation (numpy, or the library's kernels) and raises an
AssertionError that says what differs. It prints "Correct!" when all agree.
"""

import math

import numpy as np

import netcl_lite.autograd as ag
from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor
from netcl_lite.optim import AdamW

from .common import as_array, as_number


def check_1(unigram_cross_entropy):
    """unigram_cross_entropy(train_ids, val_ids, vocab_size) -> nats/token."""
    # by hand: counts [2, 1, 0] + 1 = [3, 2, 1] over 6: p = [1/2, 1/3, 1/6]
    got = as_number(unigram_cross_entropy(np.array([0, 0, 1]), np.array([0, 2]), 3),
                  "unigram_cross_entropy")
    want = -(math.log(1 / 2) + math.log(1 / 6)) / 2
    assert abs(got - want) < 1e-9, (
        f"train [0, 0, 1], val [0, 2], V=3: got {got:.6f}, want {want:.6f}. "
        "Add one to every count (token 2 never occurs in train) and divide by "
        "the total count plus V."
    )
    rng = np.random.default_rng(9)
    train = rng.integers(0, 50, 1000)
    val = rng.integers(0, 60, 200)            # ids 50..59 never seen in train
    p = np.array([np.sum(train == t) + 1 for t in range(60)], dtype=np.float64)
    p /= p.sum()
    want = float(np.mean([-math.log(p[t]) for t in val]))
    got = as_number(unigram_cross_entropy(train, val, 60), "unigram_cross_entropy")
    assert abs(got - want) < 1e-9, f"random case: got {got:.6f}, want {want:.6f}"
    print("Correct!")


def check_2(top_k_probs):
    """top_k_probs(logits, temperature, top_k) -> probabilities (V,)."""
    rng = np.random.default_rng(3)
    for V, temperature, top_k in ((5, 1.0, None), (8, 0.5, 3), (30, 2.0, 1),
                                  (30, 0.8, 30), (12, 1.5, 4)):
        logits = rng.standard_normal(V) * 3
        got = as_array(top_k_probs(logits, temperature, top_k), "top_k_probs")
        assert got.shape == (V,), f"V={V}: got shape {got.shape}, want ({V},)"
        keep = np.argsort(logits)[::-1][:top_k or V]   # the top_k largest
        want = np.zeros(V)
        w = [math.exp((logits[i] - logits[keep[0]]) / temperature) for i in keep]
        want[keep] = np.array(w) / sum(w)
        assert np.allclose(got, want, atol=1e-9), (
            f"V={V}, temperature={temperature}, top_k={top_k}:\n got {got}\n"
            f"want {want}\n(divide by the temperature, keep the top_k largest "
            "logits, give the rest probability 0, then softmax)"
        )
    print("Correct!")


def check_3(adamw_step):
    """adamw_step(p, g, m, v, t, lr, betas, eps, weight_decay) == the kernel."""
    q = manager.default("auto").queue
    rng = np.random.default_rng(5)
    for shape, lr, betas, wd in (((4,), 0.1, (0.9, 0.999), 0.0),
                                 ((3, 7), 0.01, (0.8, 0.95), 0.1)):
        p0 = rng.standard_normal(shape).astype(np.float32)
        grads = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
        node = ag.tensor(Tensor.from_host(q, p0))
        opt = AdamW([node], lr=lr, betas=betas, weight_decay=wd)
        p, m, v = p0.astype(np.float64), np.zeros(shape), np.zeros(shape)
        for t, g in enumerate(grads, start=1):
            node.grad = Tensor.from_host(q, g)
            opt.step()
            out = adamw_step(p, g.astype(np.float64), m, v, t, lr, betas, 1e-8, wd)
            assert out is not None, "adamw_step returned None: return (p, m, v)"
            assert len(out) == 3, "adamw_step must return three arrays (p, m, v)"
            p, m, v = (as_array(a, "adamw_step") for a in out)
            want = node.value.to_host()
            assert np.allclose(p, want, rtol=1e-5, atol=1e-6), (
                f"step {t}, lr={lr}, betas={betas}, weight_decay={wd}:\n"
                f" got p {p.ravel()[:4]}\nwant p {want.ravel()[:4]} (kernels/adamw.cl)"
            )
    print("Correct!")
