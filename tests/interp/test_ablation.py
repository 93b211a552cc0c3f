"""Zero, mean and resample ablation (netcl_lite/interp/ablation.py)
against the numpy forward with the same activations replaced by numpy
code written here."""

import numpy as np
import pytest

from interp_ref import forward, tiny
from netcl_lite.interp import mean_ablation, resample_ablation, zero_ablation


@pytest.fixture
def reference():
    return np.random.default_rng(11).integers(0, 23, (5, 9)).astype(np.int32)


def test_zero_ablation_of_heads_is_the_head_mask(model, ids):
    H = model.config.n_heads
    hooks = zero_ablation(model, heads=[(1, 0), (1, H - 1), (0, 1)])
    mask = {0: [1.0] * H, 1: [1.0] * H}
    mask[1][0] = mask[1][H - 1] = mask[0][1] = 0.0
    want = model(ids, head_mask=mask).value.to_host()
    np.testing.assert_allclose(model.run_with_hooks(ids, hooks), want, atol=1e-5)


def test_zero_ablation_of_a_layer_at_some_positions(model, ids):
    hooks = zero_ablation(model, layers=[0], positions=[2, 5])
    names = {"blocks.0.attn_out"} | (set() if model.config.attn_only
                                     else {"blocks.0.mlp_out"})
    assert set(hooks) == names

    def zero_at(a):
        a[:, [2, 5]] = 0.0
        return a
    want, _ = forward(model, ids, {n: zero_at for n in names})
    np.testing.assert_allclose(model.run_with_hooks(ids, hooks), want,
                               atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("per_position", [False, True])
def test_mean_ablation_matches_numpy(model, ids, reference, per_position):
    _, ref = forward(model, reference)
    z = ref["blocks.1.attn.z"]                         # (B_ref, S, H, hd)
    mean = z.mean(axis=0) if per_position else z.mean(axis=(0, 1))
    rows = np.zeros((3, 9), dtype=bool)
    rows[0, 3:6] = rows[2, 8] = True                   # a (B, S) mask

    def replace(a):
        a[:, :, 1][rows] = np.broadcast_to(mean, a.shape)[:, :, 1][rows]
        return a
    want, _ = forward(model, ids, {"blocks.1.attn.z": replace})
    hooks = mean_ablation(model, reference, heads=[(1, 1)], positions=rows,
                          per_position=per_position)
    np.testing.assert_allclose(model.run_with_hooks(ids, hooks), want,
                               atol=1e-4, rtol=1e-4)


def test_mean_ablation_of_a_layer_over_positions(model, ids, reference):
    _, ref = forward(model, reference)
    names = ["blocks.1.attn_out"] + ([] if model.config.attn_only
                                     else ["blocks.1.mlp_out"])

    def replace(name):
        def fn(a):
            a[:, 4:] = ref[name].mean(axis=(0, 1))
            return a
        return fn
    want, _ = forward(model, ids, {n: replace(n) for n in names})
    hooks = mean_ablation(model, reference, layers=[1], positions=range(4, 9))
    np.testing.assert_allclose(model.run_with_hooks(ids, hooks), want,
                               atol=1e-4, rtol=1e-4)


def test_resample_ablation_matches_numpy(model, ids, reference):
    _, ref = forward(model, reference)
    rows = np.random.default_rng(4).integers(0, len(reference), size=len(ids))

    def replace(a):
        a[:, :, 0] = ref["blocks.0.attn.z"][rows][:, :, 0]
        return a
    want, _ = forward(model, ids, {"blocks.0.attn.z": replace})
    hooks = resample_ablation(model, reference, heads=[(0, 0)], seed=4)
    np.testing.assert_allclose(model.run_with_hooks(ids, hooks), want,
                               atol=1e-4, rtol=1e-4)


def test_ablations_change_only_what_they_name(model, ids, reference):
    hooks = mean_ablation(model, reference, heads=[(1, 0)], positions=[7, 8])
    _, plain = model.run_with_cache(ids, ["blocks.1.attn.z"])
    _, hooked = model.run_with_cache(ids, ["blocks.1.attn.z"], hooks=hooks)
    a, b = plain["blocks.1.attn.z"], hooked["blocks.1.attn.z"]
    np.testing.assert_array_equal(a[:, :7], b[:, :7])
    np.testing.assert_array_equal(a[:, 7:, 1:], b[:, 7:, 1:])
    assert not np.allclose(a[:, 7:, 0], b[:, 7:, 0])


@pytest.mark.parametrize("kwargs,message", [
    ({"heads": [(2, 0)]}, r"heads: layer 2 in \(2, 0\) is not a layer"),
    ({"heads": [(0, 9)]}, r"heads: head 9 in \(0, 9\) is not a head of layer 0"),
    ({"heads": [0]}, r"heads: a head is a pair \(layer, h\), got 0"),
    ({"layers": [-1]}, r"layers: layer -1 is not a layer of this model"),
    ({"heads": [(0, 0)], "positions": [12]}, r"positions: position 12 is "
                                             r"outside 0\.\.11"),
    ({"heads": [(0, 0)], "positions": "all"},
     r"positions: expected None, an int, a range"),
    ({}, "name at least one head or layer"),
])
def test_bad_heads_layers_and_positions(queue, reference, kwargs, message):
    model = tiny(queue, H=2, HKV=2)
    for make in (lambda: zero_ablation(model, **kwargs),
                 lambda: mean_ablation(model, reference, **kwargs),
                 lambda: resample_ablation(model, reference, **kwargs)):
        with pytest.raises(ValueError, match=message):
            make()


def test_positions_past_the_run_are_caught_when_it_runs(queue, reference):
    model = tiny(queue, H=2, HKV=2)
    hooks = zero_ablation(model, heads=[(0, 0)], positions=[10])
    with pytest.raises(ValueError, match=r"positions: 10 is outside 0\.\.8"):
        model.run_with_hooks(reference, hooks)
    hooks = mean_ablation(model, reference, heads=[(0, 0)], per_position=True)
    with pytest.raises(ValueError, match="per-position means of 9 positions"):
        model.run_with_hooks(reference[:, :5], hooks)
    with pytest.raises(ValueError, match="does not fit"):
        model.run_with_hooks(reference, zero_ablation(
            model, heads=[(0, 0)], positions=np.ones((2, 9), dtype=bool)))
