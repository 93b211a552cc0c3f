"""Checks for chapter 07, the NetCL program: ``check_k(your_function)``.

Each check runs your function on a few inputs, compares the result with an
independent computation (numpy, or the library's kernels and tape) and raises
an AssertionError that says what differs. It prints "Correct!" when all agree.
"""

import math

import numpy as np

import netcl_lite.autograd as ag
import netcl_lite.functional as F
from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor
from netcl_lite.nn.transformer import RotaryAttention

from .common import as_number

CONFIGS = [(256, 4, 4), (64, 8, 2), (96, 6, 3), (32, 4, 1)]  # (dim, H, HKV)


def _queue():
    return manager.default("auto").queue


def check_1(attention_parameter_count):
    """attention_parameter_count(dim, H, HKV) == the module's weight count."""
    q = _queue()
    for dim, H, HKV in CONFIGS:
        attn = RotaryAttention(q, dim, H, HKV, max_seq_len=8)
        want = sum(math.prod(p.shape) for p in attn.parameters())
        got = attention_parameter_count(dim, H, HKV)
        assert got is not None, (
            "attention_parameter_count returned None: did you forget `return`?"
        )
        assert got == want, (
            f"attention_parameter_count({dim}, {H}, {HKV}) = {got!r}, but the "
            f"module holds {want} weights: "
            + ", ".join(f"{n} {p.shape}" for n, p in attn.named_parameters())
        )
    print("Correct!")


def check_2(directional_fd):
    """directional_fd(f, x, v, h) == the exact directional derivative."""
    rng = np.random.default_rng(7)
    # float64 numpy: f(x) = sum(sin(x) * w), grad = cos(x) * w
    x = rng.standard_normal((3, 4))
    w = rng.standard_normal((3, 4))
    v = rng.standard_normal((3, 4))
    exact = float(np.sum(np.cos(x) * w * v))
    got = as_number(directional_fd(lambda z: float(np.sum(np.sin(z) * w)), x, v, 1e-4),
                  "directional_fd")
    assert abs(got - exact) <= 1e-6 * max(1.0, abs(exact)), (
        f"sum(sin(x) * w): directional_fd gave {got:.10f}, the exact directional "
        f"derivative is {exact:.10f}. Use the central difference "
        "(f(x + h v) - f(x - h v)) / (2 h): a one-sided one is off by O(h)."
    )
    # through a library op: L(x) = sum(softmax(x) * w) on the device (float32)
    q = _queue()
    x = rng.standard_normal((4, 6))
    w = rng.standard_normal((4, 6))
    v = rng.standard_normal((4, 6))
    wt = Tensor.from_host(q, w)

    def loss(z):
        return float(F.sum(F.mul(F.softmax(Tensor.from_host(q, z)), wt))
                     .value.to_host())

    with ag.Tape() as tape:
        xn = ag.tensor(Tensor.from_host(q, x))
        out = F.sum(F.mul(F.softmax(xn), wt))
    tape.backward(out)
    exact = float(np.sum(xn.grad.to_host() * v))
    got = as_number(directional_fd(loss, x, v, 1e-2), "directional_fd")
    assert abs(got - exact) <= 1e-3 * max(1.0, abs(exact)), (
        f"sum(softmax(x) * w): directional_fd gave {got:.6f}, the tape gradient "
        f"dotted with v is {exact:.6f}"
    )
    print("Correct!")


def _rope(x, base=10000.0):
    """float64 RoPE on (..., S, d): pair (2i, 2i+1) at row m turns by m theta_i."""
    S, d = x.shape[-2:]
    theta = base ** (-np.arange(0, d, 2) / d)               # (d/2,)
    angle = np.arange(S)[:, None] * theta[None, :]          # (S, d/2)
    c, s = np.cos(angle), np.sin(angle)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def _reference_weights(attn, x, b, h):
    """float64 numpy: the causal weights of query head h for sequence b."""
    H, HKV, Dh = attn.n_heads, attn.n_kv_heads, attn.head_dim
    wq = attn.wq.value.to_host().astype(np.float64)
    wk = attn.wk.value.to_host().astype(np.float64)
    kv = h // (H // HKV)
    qh = _rope(x[b] @ wq[:, h * Dh:(h + 1) * Dh], attn.base)     # (S, Dh)
    kh = _rope(x[b] @ wk[:, kv * Dh:(kv + 1) * Dh], attn.base)   # (S, Dh)
    logits = qh @ kh.T / math.sqrt(Dh)                            # (S, S)
    S = len(logits)
    logits[np.triu(np.ones((S, S), dtype=bool), k=1)] = -np.inf
    logits -= logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=1, keepdims=True)


def check_3(head_weights):
    """head_weights(attn, x_host, b, h) == a float64 numpy computation."""
    q = _queue()
    rng = np.random.default_rng(3)
    for dim, H, HKV, S, seed in ((64, 4, 4, 7, 1), (64, 8, 2, 9, 2)):
        attn = RotaryAttention(q, dim, H, HKV, max_seq_len=16, seed=seed)
        x = rng.standard_normal((2, S, dim))
        for b, h in ((0, 0), (1, H - 1), (1, 3)):
            got = head_weights(attn, x, b, h)
            assert got is not None, "head_weights returned None: forgot `return`?"
            got = np.asarray(got, dtype=np.float64)
            assert got.shape == (S, S), (
                f"head_weights(..., b={b}, h={h}) has shape {got.shape}, want {(S, S)}"
            )
            want = _reference_weights(attn, x, b, h)
            if not np.allclose(got, want, atol=1e-5):
                i, j = np.unravel_index(np.argmax(np.abs(got - want)), want.shape)
                raise AssertionError(
                    f"dim={dim}, n_heads={H}, n_kv_heads={HKV}, b={b}, h={h}: "
                    f"weight [{i}, {j}] is {got[i, j]:.6f}, want {want[i, j]:.6f}. "
                    f"Query head h reads kv head h // (n_heads // n_kv_heads) = "
                    f"{h // (H // HKV)}; RoPE goes on q and k before the scores."
                )
    print("Correct!")
