"""Checks for chapter 05, multi-head attention: ``check_k(your_function)``.

Each check runs your function on a few inputs, compares the result with an
independent computation (numpy, or the library's kernels) and raises an
AssertionError that says what differs. It prints "Correct!" when all agree.
"""

import numpy as np

import netcl_lite.functional as F
from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor
from netcl_lite.nn import parameter
from netcl_lite.nn.transformer import RotaryAttention

from .common import as_array


def check_1(split_heads):
    """split_heads(x, H): (B, S, D) -> (B, H, S, D // H), as the library does."""
    q = manager.default("auto").queue
    rng = np.random.default_rng(5)
    for B, S, D, H in ((1, 3, 4, 2), (2, 5, 12, 3), (2, 4, 16, 4)):
        x = rng.standard_normal((B, S, D)).astype(np.float32)
        got = as_array(split_heads(x.copy(), H), "split_heads")
        t = F.reshape(Tensor.from_host(q, x), (B, S, H, D // H))  # (B, S, H, Dh)
        want = F.transpose(t, 1, 2).value.to_host()                # (B, H, S, Dh)
        assert got.shape == want.shape, (
            f"split_heads on {x.shape} with H={H} gave shape {got.shape}, "
            f"want (B, H, S, Dh) = {want.shape}"
        )
        assert np.array_equal(got, want), (
            f"split_heads(H={H}): values are in the wrong places. Head h must hold "
            f"columns h*Dh .. (h+1)*Dh-1 of every token: reshape to (B, S, H, Dh) "
            f"first, then swap the S and H axes."
        )
    print("Correct!")


def check_2(kv_cache_bytes):
    """Bytes of keys and values for batch sequences of seq_len tokens."""
    cases = [
        # (n_layers, seq_len, n_kv_heads, head_dim, bytes_per_value, batch)
        (32, 8192, 32, 128, 2, 1),
        (32, 8192, 8, 128, 2, 1),
        (80, 4096, 8, 128, 2, 4),
        (2, 10, 1, 64, 4, 3),
    ]
    for n_layers, seq_len, n_kv, hd, nbytes, batch in cases:
        got = kv_cache_bytes(n_layers, seq_len, n_kv, hd,
                             bytes_per_value=nbytes, batch=batch)
        assert got is not None, "kv_cache_bytes returned None: forgot `return`?"
        want = 2 * n_layers * seq_len * n_kv * hd * nbytes * batch
        assert got == want, (
            f"kv_cache_bytes(n_layers={n_layers}, seq_len={seq_len}, "
            f"n_kv_heads={n_kv}, head_dim={hd}, bytes_per_value={nbytes}, "
            f"batch={batch}) = {got}, want {want}. Remember there is a key AND "
            "a value per token, per layer and per kv head."
        )
    print("Correct!")


def check_3(repeat_kv_weights):
    """MHA with repeat_kv_weights(W_K), repeat_kv_weights(W_V) == the GQA layer."""
    q = manager.default("auto").queue
    rng = np.random.default_rng(6)
    for D, H, H_kv in ((16, 4, 2), (24, 6, 3), (16, 4, 1)):
        Dh = D // H
        w = rng.standard_normal((D, H_kv * Dh))
        got = as_array(repeat_kv_weights(w.copy(), H, H_kv), "repeat_kv_weights")
        want = np.repeat(w.reshape(D, H_kv, Dh), H // H_kv, axis=1).reshape(D, -1)
        assert got.shape == want.shape, (
            f"repeat_kv_weights on {w.shape} (H={H}, H_kv={H_kv}) gave shape "
            f"{got.shape}, want (D, H * Dh) = {want.shape}"
        )
        assert np.allclose(got, want), (
            f"repeat_kv_weights(H={H}, H_kv={H_kv}): columns in the wrong order. "
            "Query head h reads kv head h // (H // H_kv): repeat each kv head's "
            "block of Dh columns H // H_kv times in a row (not the whole matrix)."
        )
        # the layer-level statement, on the device
        gqa = RotaryAttention(q, dim=D, n_heads=H, n_kv_heads=H_kv,
                              max_seq_len=8, causal=True, seed=2)
        mha = RotaryAttention(q, dim=D, n_heads=H, n_kv_heads=H,
                              max_seq_len=8, causal=True, seed=3)
        mha.wq, mha.wo = gqa.wq, gqa.wo
        for name in ("wk", "wv"):
            w_kv = getattr(gqa, name).value.to_host().astype(np.float64)
            rep = as_array(repeat_kv_weights(w_kv, H, H_kv), "repeat_kv_weights")
            setattr(mha, name, parameter(q, rep, name))
        x = Tensor.from_host(q, rng.standard_normal((2, 5, D)))
        a, b = gqa(x).value.to_host(), mha(x).value.to_host()
        assert np.allclose(a, b, atol=1e-5), (
            f"with your weights the MHA layer differs from the GQA layer "
            f"(H={H}, H_kv={H_kv}) by up to {np.abs(a - b).max():.3g}"
        )
    print("Correct!")
