"""DecoderLM's named activations (nn/hooks.py): the cache against a numpy
forward pass written in interp_ref.py, replacement hooks, the gradients of
a metric with respect to activations, the cost when no hook is set, and the
errors."""

import numpy as np
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional as F
from interp_ref import forward, params, tiny
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from netcl_lite.interp import LogitMetric
from numpy_ref.layers import rms_norm_vjp


def test_the_names_follow_the_model(model):
    names = model.hook_names()
    L = len(model.blocks)
    assert names[-2:] == ["ln_final.input", "ln_final.scale"]
    per_block = 5 if model.config.attn_only else 6
    assert len(names) == L * per_block + 2
    assert ("blocks.1.mlp_out" in names) == (not model.config.attn_only)


def test_the_cache_matches_numpy(model, ids):
    logits, cache = model.run_with_cache(ids)
    want_logits, want = forward(model, ids)
    assert set(cache) == set(model.hook_names())
    for name, value in cache.items():
        assert value.dtype == np.float32, name
        assert value.shape == want[name].shape, name
        np.testing.assert_allclose(value, want[name], atol=2e-5, rtol=1e-4,
                                   err_msg=name)
    np.testing.assert_allclose(logits, want_logits, atol=5e-5, rtol=1e-4)


def test_the_documented_shapes(queue, ids):
    model = tiny(queue, H=4, HKV=1)
    _, cache = model.run_with_cache(ids)
    B, S = ids.shape
    D, H, hd = 16, 4, 4
    assert cache["blocks.0.resid_pre"].shape == (B, S, D)
    assert cache["blocks.1.attn.pattern"].shape == (B, H, S, S)
    assert cache["blocks.1.attn.z"].shape == (B, S, H, hd)
    assert cache["blocks.0.attn_out"].shape == (B, S, D)
    assert cache["blocks.0.mlp_out"].shape == (B, S, D)
    assert cache["blocks.1.resid_post"].shape == (B, S, D)
    assert cache["ln_final.input"].shape == (B, S, D)
    assert cache["ln_final.scale"].shape == (B, S, 1)


def test_a_cache_of_some_names_holds_only_those(model, ids):
    logits, cache = model.run_with_cache(ids, ["blocks.1.attn.z"])
    assert list(cache) == ["blocks.1.attn.z"]
    assert logits.shape == (3, 9, 23)


def test_hooks_off_gives_the_same_bits(model, ids):
    """The plain forward, a cache of everything but the patterns, and
    identity hooks on those names: the same float32 logits, bit for bit
    (a copy to the host and back is exact). A pattern read is recomputed
    beside the fused kernel, so it changes nothing either."""
    plain = model(ids).value.to_host()
    names = [n for n in model.hook_names() if not n.endswith("pattern")]
    cached, _ = model.run_with_cache(ids)          # the patterns too
    same = model.run_with_hooks(ids, {n: (lambda a: a) for n in names
                                      if n != "ln_final.scale"})
    assert np.array_equal(plain, cached)
    assert np.array_equal(plain, same)
    # the same kernels a hand-written forward of the same modules runs
    x = model.tok_emb(Tensor.from_host(model.queue, ids))
    for block in model.blocks:
        h = F.add(x, block.attn(block.attn_norm(x)))
        x = h if block.ffn is None else F.add(h, block.ffn(block.ffn_norm(h)))
    by_hand = model.head(model.norm(x)).value.to_host()
    assert np.array_equal(plain, by_hand)


def test_a_forward_without_hooks_costs_nothing_extra(queue, ids, monkeypatch):
    """No added kernel and no buffer: the trace of model.forward equals the
    trace of the same modules called by hand; and no copy to the host."""
    model = tiny(queue, H=4, HKV=2)
    dev_ids = Tensor.from_host(queue, ids)
    model(dev_ids)                                   # warm: tuned, compiled

    def by_hand():
        x = model.tok_emb(dev_ids)
        for block in model.blocks:
            h = F.add(x, block.attn(block.attn_norm(x)))
            x = F.add(h, block.ffn(block.ffn_norm(h)))
        return model.head(model.norm(x))

    with trace() as hand:
        by_hand()
    copies = []
    real = Tensor.to_host
    monkeypatch.setattr(Tensor, "to_host",
                        lambda self: copies.append(self.shape) or real(self))
    with trace() as ran:
        model(dev_ids)
    assert list(ran) == list(hand) and len(ran) > 10
    assert ran.allocations == hand.allocations
    assert copies == []


def test_identity_pattern_hooks_attend_through_A(model, ids):
    """Replacing a pattern makes the layer attend as A v: the same logits
    as the fused kernel, to float32 rounding; and the pattern itself."""
    plain = model(ids).value.to_host()
    names = [n for n in model.hook_names() if n.endswith("pattern")]
    logits, cache = model.run_with_cache(ids, names,
                                         hooks={n: (lambda a: a) for n in names})
    np.testing.assert_allclose(logits, plain, atol=2e-5)
    want = forward(model, ids)[1]
    for n in names:
        np.testing.assert_allclose(cache[n], want[n], atol=2e-6)


def test_replacing_matches_numpy(model, ids):
    """Every kind of replacement against the numpy forward that replaces
    the same activation the same way."""
    def noisy(a):
        return a + 0.3 * np.random.default_rng(5).standard_normal(a.shape)

    def flat_pattern(A):
        S = A.shape[-1]
        keep = np.tril(np.ones((S, S)))
        return np.broadcast_to(keep / keep.sum(-1, keepdims=True), A.shape).copy()

    cases = {"blocks.0.resid_pre": noisy, "blocks.1.attn.z": noisy,
             "blocks.0.attn_out": noisy, "blocks.0.resid_post": noisy,
             "blocks.1.attn.pattern": flat_pattern, "ln_final.input": noisy,
             "ln_final.scale": lambda s: s * np.random.default_rng(9)
             .uniform(0.5, 2.0, s.shape)}
    if not model.config.attn_only:
        cases["blocks.1.mlp_out"] = noisy
    for name, fn in cases.items():
        got = model.run_with_hooks(ids, {name: fn})
        want, _ = forward(model, ids, {name: fn})
        np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4,
                                   err_msg=name)


def test_a_hook_sees_the_activation_and_its_cache_what_was_used(model, ids):
    seen = {}

    def record_and_double(a):
        seen["z"] = a.copy()
        return 2 * a

    _, cache = model.run_with_cache(ids, ["blocks.0.attn.z"],
                                    hooks={"blocks.0.attn.z": record_and_double})
    _, plain = model.run_with_cache(ids, ["blocks.0.attn.z"])
    np.testing.assert_array_equal(seen["z"], plain["blocks.0.attn.z"])
    np.testing.assert_array_equal(cache["blocks.0.attn.z"], 2 * seen["z"])


def _fd_grad(model, ids, metric, name, direction, eps=1e-3):
    """Central difference of the metric along a direction of an activation."""
    def shifted(sign):
        return metric(model.run_with_hooks(
            ids, {name: lambda a: a + sign * eps * direction}))
    return (shifted(+1) - shifted(-1)) / (2 * eps)


def test_activation_grads_match_finite_differences(model, ids):
    rng = np.random.default_rng(0)
    weights = rng.standard_normal((3, 9, 23)) / 30
    metric = LogitMetric(weights)
    names = [n for n in model.hook_names()]
    grads = model.activation_grads(ids, metric, names)
    _, acts = model.run_with_cache(ids)
    for name in names:
        g = grads[name].astype(np.float64)
        assert g.shape == acts[name].shape, name
        direction = rng.standard_normal(g.shape)
        if name.endswith("pattern"):     # stay on the causal rows' support
            direction *= acts[name] > 0
        want = _fd_grad(model, ids, metric, name, direction)
        got = np.sum(g * direction)
        assert got == pytest.approx(want, rel=2e-2, abs=2e-3), name


def test_grads_of_the_final_norm_match_numpy(model, ids):
    """Exact references: the metric is linear in the logits, the logits
    linear in ln_final.scale, and the norm's vjp gives ln_final.input's."""
    weights = np.random.default_rng(1).standard_normal((3, 9, 23))
    grads = model.activation_grads(ids, LogitMetric(weights),
                                   ["ln_final.input", "ln_final.scale"])
    _, acts = forward(model, ids)
    p = params(model)
    x, gain = acts["ln_final.input"], p["norm.weight"]
    g_y = weights @ p["head.weight"].T                          # d m / d norm out
    np.testing.assert_allclose(grads["ln_final.scale"],
                               (g_y * x * gain).sum(-1, keepdims=True),
                               rtol=1e-4, atol=1e-4)
    want_x = rms_norm_vjp(x, gain, g_y, model.config.norm_eps)[0]
    np.testing.assert_allclose(grads["ln_final.input"], want_x, rtol=1e-4,
                               atol=1e-4)


def test_activation_grads_leave_the_weights_alone(model, ids):
    before = [p.grad for p in model.parameters()]
    metric = LogitMetric(np.ones((3, 9, 23)))
    model.activation_grads(ids, metric, ["blocks.0.resid_pre"])
    assert [p.grad for p in model.parameters()] == before
    assert all(p.requires_grad for p in model.parameters())
    # training still works afterwards
    with ag.Tape() as tape:
        loss = model.loss(ids, ids)
    tape.backward(loss)
    assert all(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize("call", ["cache", "hooks", "grads"])
def test_an_unknown_name_is_a_value_error_naming_it(model, ids, call):
    bad = "blocks.7.attn.z"
    with pytest.raises(ValueError, match=r"unknown activation name 'blocks\.7"):
        if call == "cache":
            model.run_with_cache(ids, [bad])
        elif call == "hooks":
            model.run_with_hooks(ids, {bad: lambda a: a})
        else:
            model.activation_grads(ids, LogitMetric(np.ones((3, 9, 23))), [bad])


def test_mlp_out_is_not_a_name_of_an_attention_only_model(queue, ids):
    model = tiny(queue, H=2, HKV=2, attn_only=True)
    with pytest.raises(ValueError, match="'blocks.0.mlp_out'"):
        model.run_with_cache(ids, ["blocks.0.mlp_out"])


def test_a_hook_of_the_wrong_shape_is_a_value_error_naming_it(model, ids):
    with pytest.raises(ValueError, match=r"'blocks\.1\.attn\.z' returned shape "
                                         r"\(3, 9\); the activation has shape"):
        model.run_with_hooks(ids, {"blocks.1.attn.z": lambda a: a[..., 0, 0]})
    with pytest.raises(ValueError, match="'ln_final.scale' returned no array"):
        model.run_with_hooks(ids, {"ln_final.scale": lambda a: None})
    with pytest.raises(ValueError, match="not finite"):
        model.run_with_hooks(ids, {"blocks.0.attn_out":
                                   lambda a: np.full_like(a, np.inf)})


def test_other_bad_calls(model, ids):
    with pytest.raises(ValueError, match="is not a function"):
        model.run_with_hooks(ids, {"blocks.0.attn_out": 3.0})
    with pytest.raises(ValueError, match="expected a list of names"):
        model.run_with_cache(ids, "blocks.0.attn_out")
    with pytest.raises(ValueError, match="metric must return a node of one"):
        model.activation_grads(ids, lambda logits: logits, ["ln_final.input"])
    with pytest.raises(ValueError, match="no names"):
        model.activation_grads(ids, LogitMetric(np.ones((3, 9, 23))), [])
    with pytest.raises(ValueError, match="exceed max_seq_len"):
        model.run_with_cache(np.zeros((1, 13), np.int32))


def test_the_calls_cannot_nest(model, ids):
    def nested(a):
        model.run_with_cache(ids, ["blocks.0.attn_out"])
        return a
    with pytest.raises(ValueError, match="cannot run inside each other"):
        model.run_with_hooks(ids, {"blocks.0.attn_out": nested})
    model.run_with_cache(ids, ["blocks.0.attn_out"])      # the plan is gone


def test_a_failing_hook_leaves_no_plan_behind(model, ids):
    def fail(a):
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError):
        model.run_with_hooks(ids, {"blocks.0.attn_out": fail})
    assert np.array_equal(model(ids).value.to_host(), model(ids).value.to_host())
    _, cache = model.run_with_cache(ids, ["blocks.0.attn_out"])
    assert "blocks.0.attn_out" in cache
