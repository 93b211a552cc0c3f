"""Activation patching and attribution patching
(netcl_lite/interp/patching.py) against numpy patching written here."""

import numpy as np
import pytest

from interp_ref import forward, tiny
from netcl_lite.core.tensor import Tensor
from netcl_lite.interp import (LogitMetric, activation_patching,
                               attribution_patching)


@pytest.fixture
def pair():
    """A clean batch and a corrupted one: the first half of each row redrawn."""
    rng = np.random.default_rng(2)
    clean = rng.integers(0, 23, (2, 8)).astype(np.int32)
    corrupted = clean.copy()
    corrupted[:, :4] = rng.integers(0, 23, (2, 4))
    return clean, corrupted


@pytest.fixture
def metric(pair):
    clean, _ = pair
    mask = np.zeros(clean.shape, dtype=bool)
    mask[:, -3:] = True
    return LogitMetric.target_logit(np.roll(clean, -1, axis=1), mask, 23)


def families(model):
    out = ["heads", "pattern", "resid_pre", "attn_out", "resid_post",
           "ln_final.input", "ln_final.scale"]
    return out + ([] if model.config.attn_only else ["mlp_out"])


def test_patching_clean_into_clean_gives_the_clean_score(model, pair, metric):
    clean, _ = pair
    score = metric(model(clean).value.to_host())
    for what in families(model):
        for per_position in (True, False):
            out = activation_patching(model, clean, clean, metric, what,
                                      per_position=per_position)
            np.testing.assert_allclose(out, score, atol=1e-4, err_msg=what)


def test_the_layouts(queue, pair, metric):
    model = tiny(queue, H=4, HKV=2)
    clean, corrupted = pair
    shape = {"heads": (2, 4, 8), "pattern": (2, 4, 8), "resid_pre": (2, 8),
             "mlp_out": (2, 8), "ln_final.scale": (1, 8)}
    for what, want in shape.items():
        out = activation_patching(model, clean, corrupted, metric, what)
        assert out.shape == want
        est = attribution_patching(model, clean, corrupted, metric, what)
        assert est.shape == want
    out = activation_patching(model, clean, corrupted, metric, "heads",
                              positions=[0, 5])
    assert out.shape == (2, 4, 2)
    out = activation_patching(model, clean, corrupted, metric, "heads",
                              per_position=False)
    assert out.shape == (2, 4)


def test_activation_patching_matches_numpy(model, pair, metric):
    clean, corrupted = pair
    _, clean_acts = forward(model, clean)
    got = activation_patching(model, clean, corrupted, metric, "heads")
    resid = activation_patching(model, clean, corrupted, metric, "resid_pre")
    for layer, h, s in [(0, 0, 1), (1, 1, 7), (1, 0, 3)]:
        def patch(a, layer=layer, h=h, s=s):
            a[:, s, h] = clean_acts[f"blocks.{layer}.attn.z"][:, s, h]
            return a
        logits, _ = forward(model, corrupted, {f"blocks.{layer}.attn.z": patch})
        assert got[layer, h, s] == pytest.approx(metric(logits), abs=1e-4)
    for layer, s in [(0, 2), (1, 6)]:
        name = f"blocks.{layer}.resid_pre"

        def patch(a, s=s, name=name):
            a[:, s] = clean_acts[name][:, s]
            return a
        logits, _ = forward(model, corrupted, {name: patch})
        assert resid[layer, s] == pytest.approx(metric(logits), abs=1e-4)


def test_attribution_is_exact_where_the_model_is_linear(model, pair, metric):
    """The logits are linear in the final norm's scale, so gradient times
    difference is the whole change that patching the scale makes."""
    clean, corrupted = pair
    base = metric(model(corrupted).value.to_host())
    real = activation_patching(model, clean, corrupted, metric,
                               "ln_final.scale") - base
    estimate = attribution_patching(model, clean, corrupted, metric,
                                    "ln_final.scale")
    np.testing.assert_allclose(estimate, real, atol=2e-4, rtol=1e-3)
    assert np.abs(real).max() > 1e-2                 # the test can fail


def test_attribution_of_the_last_layer_with_a_linear_norm(queue, pair, metric):
    """With a huge eps the final norm divides by a constant, about
    sqrt(eps) (its gain makes up for it): the logits become linear in the
    last layer's z and pattern, and the estimate equals real patching."""
    model = tiny(queue, H=4, HKV=2, attn_only=True)
    model.norm.eps = 1e8                        # the final norm's only
    model.norm.weight.value = Tensor.from_host(queue, np.full(16, 1e4))
    clean, corrupted = pair
    base = metric(model(corrupted).value.to_host())
    for what in ("heads", "pattern"):
        real = activation_patching(model, clean, corrupted, metric, what)[1] - base
        est = attribution_patching(model, clean, corrupted, metric, what)[1]
        assert np.abs(real).max() > 1e-2
        np.testing.assert_allclose(est, real, rtol=2e-3,
                                   atol=2e-3 * np.abs(real).max(), err_msg=what)


def test_attribution_matches_numpy_gradients(model, pair, metric):
    """Sum of (clean - corrupted) * grad, with grad taken by central
    differences of the numpy forward, for a few heads and positions."""
    clean, corrupted = pair
    _, c = forward(model, clean)
    _, k = forward(model, corrupted)
    est = attribution_patching(model, clean, corrupted, metric, "heads")
    for layer, h, s in [(0, 1, 2), (1, 0, 6)]:
        name = f"blocks.{layer}.attn.z"
        delta = np.zeros_like(c[name])
        delta[:, s, h] = c[name][:, s, h] - k[name][:, s, h]
        eps = 1e-4

        def shift(sign):
            return metric(forward(model, corrupted,
                                  {name: lambda a: a + sign * eps * delta})[0])
        want = (shift(1) - shift(-1)) / (2 * eps)
        assert est[layer, h, s] == pytest.approx(want, rel=1e-3, abs=1e-5)


def test_bad_calls(queue, pair, metric):
    model = tiny(queue, H=2, HKV=2, attn_only=True)
    clean, corrupted = pair
    with pytest.raises(ValueError, match="attn_only has no MLP"):
        activation_patching(model, clean, corrupted, metric, "mlp_out")
    with pytest.raises(ValueError, match="what: expected one of"):
        attribution_patching(model, clean, corrupted, metric, "z")
    with pytest.raises(ValueError, match=r"must be one \(B, S\) shape"):
        activation_patching(model, clean, corrupted[:, :5], metric)
    with pytest.raises(ValueError, match=r"positions: position 8 is outside"):
        activation_patching(model, clean, corrupted, metric, positions=[8])
