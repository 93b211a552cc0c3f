import numpy as np
import pytest

from interp_ref import tiny

# (n_heads, n_kv_heads, attn_only): grouped kv heads, with and without MLP
SHAPES = [(4, 2, False), (2, 2, True), (3, 1, False), (4, 1, True)]


@pytest.fixture(params=SHAPES, ids=lambda s: f"H{s[0]}kv{s[1]}" +
                ("-attn_only" if s[2] else "-mlp"))
def model(request, queue):
    H, HKV, attn_only = request.param
    return tiny(queue, H, HKV, attn_only)


@pytest.fixture
def ids():
    return np.random.default_rng(7).integers(0, 23, (3, 9)).astype(np.int32)
