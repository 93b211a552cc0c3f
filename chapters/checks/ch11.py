"""Checks for chapter 11, ablations and the trained embedding table:
``check_k(your_function)``.

Each check runs your function on a few inputs, compares the result with an
independent computation (numpy, or what the library's KV-cache really holds)
and raises an AssertionError that says what differs. It prints "Correct!"
when all agree.
"""

import numpy as np

from netcl_lite.core.device import manager
from netcl_lite.nn import DecoderConfig, DecoderLM, KVCache

from .common import as_array, as_number


def check_1(kv_cache_bytes_per_token):
    """kv_cache_bytes_per_token(n_layers, n_kv_heads, head_dim, bytes) -> int."""
    # by hand: 2 tensors x 2 layers x 2 kv heads x 32 dims x 4 bytes
    got = as_number(kv_cache_bytes_per_token(2, 2, 32), "kv_cache_bytes_per_token")
    assert got == 1024, (
        f"2 layers, 2 kv heads, head_dim 32: got {got:g}, want 1024 "
        "(keys AND values, 4 bytes each)"
    )
    got = as_number(kv_cache_bytes_per_token(32, 8, 128, bytes_per_value=2),
                    "kv_cache_bytes_per_token")
    assert got == 131072, f"32 layers, 8 kv heads, 128 dims, fp16: got {got:g}"
    q = manager.default("auto").queue
    for hkv in (4, 2, 1):
        cfg = DecoderConfig(vocab_size=20, dim=32, n_layers=3, n_heads=4,
                            n_kv_heads=hkv, max_seq_len=16, seed=0)
        model, cache, S = DecoderLM(q, cfg), KVCache(3), 10
        model(np.zeros((1, S), np.int32), cache)           # fill the cache
        held = sum(layer.k.to_host().nbytes + layer.v.to_host().nbytes
                   for layer in cache.layers) / S
        got = as_number(kv_cache_bytes_per_token(3, hkv, 8),
                        "kv_cache_bytes_per_token")
        assert got == held, (
            f"3 layers, {hkv} kv heads, head_dim 8: got {got:g} bytes per token, "
            f"the KVCache holds {held:g}"
        )
    print("Correct!")


def _entropy(A):
    A = np.asarray(A, np.float64)
    return float(np.mean(-np.sum(A * np.log(np.where(A > 0, A, 1.0)), axis=-1)))


def check_2(mean_attention_entropy):
    """mean_attention_entropy(A) -> mean row entropy in nats."""
    S = 6
    even = np.tril(np.ones((S, S))) / np.arange(1, S + 1)[:, None]
    got = as_number(mean_attention_entropy(even), "mean_attention_entropy")
    want = float(np.mean(np.log(np.arange(1, S + 1))))   # row i: ln(i + 1)
    assert abs(got - want) < 1e-9, (
        f"even causal attention, S={S}: got {got:.6f}, want {want:.6f} "
        "(row i spreads over i+1 keys: entropy ln(i+1); treat 0 ln 0 as 0)"
    )
    onehot = np.eye(S)[None, None]                      # (1, 1, S, S)
    got = as_number(mean_attention_entropy(onehot), "mean_attention_entropy")
    assert abs(got) < 1e-9, f"one-hot rows: got {got}, want 0"
    rng = np.random.default_rng(11)
    z = rng.standard_normal((2, 3, 7, 7)) * 2
    z = np.where(np.tril(np.ones((7, 7))) > 0, z, -np.inf)
    A = np.exp(z - z.max(-1, keepdims=True))
    A /= A.sum(-1, keepdims=True)
    got = as_number(mean_attention_entropy(A), "mean_attention_entropy")
    assert abs(got - _entropy(A)) < 1e-9, (
        f"random causal maps (2, 3, 7, 7): got {got:.6f}, want {_entropy(A):.6f}"
    )
    print("Correct!")


def check_3(nearest_by_cosine):
    """nearest_by_cosine(table, token, k) -> k ids, most similar first."""
    table = np.array([[1.0, 0.0], [10.0, 1.0], [0.0, 3.0], [-1.0, 0.0]])
    got = nearest_by_cosine(table, 0, 2)
    assert got is not None, "nearest_by_cosine returned None"
    got = [int(i) for i in as_array(got, "nearest_by_cosine")]
    assert got == [1, 2], (
        f"table {table.tolist()}, token 0, k=2: got {got}, want [1, 2] "
        "(cosine ignores length: row 1 points almost the same way; leave out "
        "the token itself)"
    )
    rng = np.random.default_rng(4)
    table = rng.standard_normal((50, 8))
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    for token, k in ((3, 5), (49, 1), (0, 10)):
        cos = unit @ unit[token]
        cos[token] = -np.inf
        want = list(np.argsort(cos)[::-1][:k])
        got = [int(i) for i in as_array(nearest_by_cosine(table, token, k),
                                        "nearest_by_cosine")]
        assert got == want, f"random (50, 8) table, token {token}, k={k}: " \
                            f"got {got}, want {want}"
    print("Correct!")
