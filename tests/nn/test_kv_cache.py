"""KV-cache: logits fed token by token equal a full recomputation."""

import numpy as np
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional as F
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from netcl_lite.nn import DecoderConfig, DecoderLM, KVCache


def tiny_model(queue, **overrides):
    cfg = dict(vocab_size=37, dim=24, n_layers=2, n_heads=4, n_kv_heads=2,
               max_seq_len=20, hidden_dim=30, seed=3)
    cfg.update(overrides)
    return DecoderLM(queue, DecoderConfig(**cfg))


@pytest.mark.parametrize("chunks", [[1] * 13, [5, 1, 1, 3, 3], [13]])
def test_cached_logits_equal_full_recomputation(queue, rng, chunks):
    model = tiny_model(queue)
    ids = rng.integers(0, 37, size=(2, sum(chunks)))          # (B, S)
    full = model(ids).value.to_host()                         # (B, S, V)
    cache, start = KVCache(2), 0
    for n in chunks:
        step = model(ids[:, start:start + n], cache).value.to_host()
        np.testing.assert_allclose(step, full[:, start:start + n], atol=1e-4,
                                   rtol=0)
        start += n
        assert cache.length == start
    assert cache.layers[1].k.shape == (2, 2, 13, 6)           # (B, HKV, S, d_k)


def test_one_step_runs_the_concat_kernel(queue, rng):
    model = tiny_model(queue, n_layers=1)
    cache = KVCache(1)
    model(rng.integers(0, 37, size=(1, 4)), cache)
    with trace() as ran:
        model(np.array([[7]]), cache)
    assert ran.count("concat.cl:concat_forward") == 2          # k and v


@pytest.mark.parametrize("shape_past,n_new", [((1, 1, 1, 2), 1),
                                              ((2, 3, 37, 5), 4)])
def test_concat_along_positions_matches_numpy(queue, rng, shape_past, n_new):
    a = rng.standard_normal(shape_past).astype(np.float32)
    b = rng.standard_normal(shape_past[:2] + (n_new,) + shape_past[3:])
    b = b.astype(np.float32)
    got = F.concat(Tensor.from_host(queue, a), Tensor.from_host(queue, b), axis=2)
    np.testing.assert_array_equal(got.value.to_host(),
                                  np.concatenate([a, b], axis=2))


def test_cache_refuses_overflow_and_tapes(queue, rng):
    model = tiny_model(queue, max_seq_len=6)
    cache = KVCache(2)
    model(rng.integers(0, 37, size=(1, 4)), cache)
    with pytest.raises(ValueError, match=r"positions 4..6 exceed max_seq_len 6"):
        model(rng.integers(0, 37, size=(1, 3)), cache)
    assert cache.length == 4                                   # unchanged
    with ag.Tape():
        with pytest.raises(ValueError, match="KVCache is for inference"):
            model(np.array([[1]]), cache)
    with pytest.raises(ValueError, match="cache has 1 layers, the model 2"):
        model(np.array([[1]]), KVCache(1))
    cache.reset()
    assert cache.length == 0


def test_layer_cache_rejects_mismatched_shapes(queue):
    cache = KVCache(1)
    k = Tensor.from_host(queue, np.zeros((1, 2, 3, 4)))
    cache.layers[0].append(k, k)
    other = Tensor.from_host(queue, np.zeros((1, 1, 3, 4)))
    with pytest.raises(ValueError, match=r"new k \(1, 1, 3, 4\) does not extend"):
        cache.layers[0].append(other, other)
    with pytest.raises(ValueError, match="one shape"):
        cache.layers[0].append(k, other)
    with pytest.raises(ValueError, match="n_layers must be positive"):
        KVCache(0)
