"""Direct logit attribution and the logit lens
(netcl_lite/interp/attribution.py, logit_lens.py) against numpy."""

import numpy as np
import pytest

from interp_ref import forward, params, tiny
from netcl_lite.interp import direct_logit_attribution, logit_lens
from numpy_ref.layers import rms_norm


@pytest.mark.parametrize("versus", [None, "mean", "ids"])
def test_the_parts_sum_to_the_logit(model, ids, versus):
    targets = np.roll(ids, -1, axis=1)
    other = (targets + 5) % 23 if versus == "ids" else versus
    dla = direct_logit_attribution(model, ids, targets, versus=other)
    logits = model(ids).value.to_host().astype(np.float64)
    want = np.take_along_axis(logits, targets[..., None], -1)[..., 0]
    if versus == "mean":
        want = want - logits.mean(-1)
    elif versus == "ids":
        want = want - np.take_along_axis(logits, other[..., None], -1)[..., 0]
    np.testing.assert_allclose(dla.total, want, atol=1e-6)
    np.testing.assert_allclose(dla.parts.sum(axis=0), want, atol=2e-4)
    assert np.abs(dla.parts).max() > 0.05           # not all zero


def test_each_part_matches_numpy(model, ids):
    """Each head's part is z_h W_O^h through the fixed scale and W_U,
    computed here from the numpy forward's activations."""
    targets = np.roll(ids, -1, axis=1)
    dla = direct_logit_attribution(model, ids, targets, versus=None)
    _, acts = forward(model, ids)
    p = params(model)
    scale, gain, W_U = acts["ln_final.scale"], p["norm.weight"], p["head.weight"]

    def logit_of(part):                              # (B, S)
        full = (part * scale * gain) @ W_U
        return np.take_along_axis(full, targets[..., None], -1)[..., 0]

    H = model.config.n_heads
    hd = model.config.dim // H
    want = {"embed": logit_of(acts["blocks.0.resid_pre"])}
    for layer in range(2):
        z = acts[f"blocks.{layer}.attn.z"]
        wo = p[f"blocks.{layer}.attn.wo"]
        for h in range(H):
            want[f"L{layer}H{h}"] = logit_of(z[:, :, h] @ wo[h * hd:(h + 1) * hd])
        if not model.config.attn_only:
            want[f"L{layer} mlp"] = logit_of(acts[f"blocks.{layer}.mlp_out"])
    assert dla.labels == list(want)
    for label, part in zip(dla.labels, dla.parts):
        np.testing.assert_allclose(part, want[label], atol=2e-4, err_msg=label)


def test_bad_targets(queue, ids):
    model = tiny(queue, H=2, HKV=2)
    with pytest.raises(ValueError, match="targets id 23 is outside 0..22"):
        direct_logit_attribution(model, ids, np.full(ids.shape, 23))
    with pytest.raises(ValueError, match=r"targets of shape \(3, 8\)"):
        direct_logit_attribution(model, ids, ids[:, 1:])
    with pytest.raises(ValueError, match="versus must be 'mean', None or"):
        direct_logit_attribution(model, ids, ids, versus="max")


def test_the_logit_lens_reads_each_depth_through_the_final_norm(model, ids):
    lens = logit_lens(model, ids)
    assert lens.shape == (3, 3, 9, 23)
    assert np.array_equal(lens[-1], model(ids).value.to_host())   # same bits
    _, acts = forward(model, ids)
    p = params(model)
    for depth, name in enumerate(["blocks.0.resid_pre", "blocks.1.resid_pre",
                                  "ln_final.input"]):
        want = rms_norm(acts[name], p["norm.weight"], model.config.norm_eps) \
            @ p["head.weight"]
        np.testing.assert_allclose(lens[depth], want, atol=5e-5, rtol=1e-4)
