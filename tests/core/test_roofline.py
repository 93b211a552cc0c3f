"""core/roofline.py and kernels/roofline.cl: the FMA loop computes its closed
form, the copy copies, the measurements give positive rates, every count
(core/work.py, beside each launch) names parameters its kernel has, every
kernel of a training step is counted, and profile counts what it ran."""

import numpy as np
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional  # noqa: F401 (the ops register their counts)
from netcl_lite.core import roofline
from netcl_lite.core.program import LOCAL_1D, kernel_dir, kernel_source, launch
from netcl_lite.core.signature import parse_signatures
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.tensor_ops import add_tensors, work_items
from netcl_lite.core.work import WORK
from netcl_lite.nn import DecoderConfig, DecoderLM
from netcl_lite.optim import AdamW, clip_grad_norm


def closed_form(n, a, b, iters, vw):
    """fma_loop's out, in float64: accumulator j of work-item i starts at
    x0 = i % 8 + j and after t updates x <- a x + b holds
    a^t x0 + b (a^t - 1) / (a - 1); out[i] is vw times their sum."""
    i = np.arange(n)[:, None]                      # (n, 1)
    x0 = (i % 8 + np.arange(roofline.NACC)).astype(np.float64)  # (n, NACC)
    at = a ** iters
    x = at * x0 + (b * (at - 1) / (a - 1) if a != 1 else b * iters)
    return vw * x.sum(axis=1)                      # (n,)


@pytest.mark.parametrize("vw", roofline.WIDTHS)
@pytest.mark.parametrize("iters", [0, 1, 3, 9])
def test_fma_loop_gives_its_closed_form(queue, vw, iters):
    n = 100                          # not a multiple of LOCAL_1D: padding
    out = Tensor.from_host(queue, np.full(n + 28, -7.0, np.float32))
    launch(queue, "roofline", "fma_loop", (n,), LOCAL_1D, out, 0.5, 1.0,
           iters, n, options=(f"-DVW={vw}",))
    got = out.to_host()
    np.testing.assert_allclose(got[:n], closed_form(n, 0.5, 1.0, iters, vw),
                               rtol=1e-6)
    assert (got[n:] == -7.0).all(), "a padding work-item wrote"


def test_fma_loop_with_a_growing_factor(queue):
    n, iters = 64, 5
    out = Tensor.empty(queue, (n,))
    launch(queue, "roofline", "fma_loop", (n,), LOCAL_1D, out, 1.25, -0.5,
           iters, n, options=("-DVW=8",))
    np.testing.assert_allclose(out.to_host(),
                               closed_form(n, 1.25, -0.5, iters, 8), rtol=1e-5)


@pytest.mark.parametrize("n", [1, 63, 1000, 300_007])
def test_copy_copies(queue, n):
    src = np.random.default_rng(n).standard_normal(n + 5).astype(np.float32)
    x = Tensor.from_host(queue, src)
    out = Tensor.from_host(queue, np.full(n + 5, 9.0, np.float32))
    launch(queue, "roofline", "copy", (work_items(queue, n),), LOCAL_1D,
           out, x, n)
    got = out.to_host()
    np.testing.assert_array_equal(got[:n], src[:n])
    assert (got[n:] == 9.0).all(), "copy wrote past n"


def test_the_measurements_are_positive_rates(queue):
    flops, vw = roofline.peak_flops(queue, seconds=0.002, repeats=1)
    assert flops > 1e8 and vw in roofline.WIDTHS
    bandwidth = roofline.copy_bandwidth(queue, nbytes=1 << 20, repeats=2)
    assert bandwidth > 1e7
    roof = roofline.Roof(flops, bandwidth)
    assert roof.ridge == pytest.approx(flops / bandwidth)
    assert roof.attainable(roof.ridge / 2) == pytest.approx(flops / 2)
    assert roof.attainable(roof.ridge * 2) == flops


def test_copy_sizes_fit_or_overflow_the_cache(queue):
    cache = queue.device.global_mem_cache_size
    big, small = roofline.copy_bytes(queue), roofline.copy_bytes(queue, True)
    assert small < big and big % 4 == small % 4 == 0
    assert big >= min(4 * cache, queue.device.max_mem_alloc_size // 4 - 3)
    assert 2 * small <= max(cache, 512 << 10)


def test_bad_measurements_name_the_value(queue):
    with pytest.raises(ValueError, match="nbytes >= 4, got 3"):
        roofline.copy_bandwidth(queue, nbytes=3)
    with pytest.raises(ValueError, match="got 0 and 5"):
        roofline.Roof(0, 5)
    with pytest.raises(ValueError, match="profiling_queue"):
        roofline.profile(queue, lambda: None)


def test_work_of_a_product_by_hand():
    # (2048, 128) @ (128, 352): 2 M N K FLOPs; A, B and C once each
    flops, nbytes = roofline.work(
        "matmul_tiled", dict(batch=1, M=2048, N=352, K=128, b_bs=0))
    assert flops == 2 * 2048 * 352 * 128
    assert nbytes == 4 * (2048 * 128 + 128 * 352 + 2048 * 352)
    # a batch of 3 with its own B each reads three B
    _, batched = roofline.work(
        "matmul_tiled", dict(batch=3, M=4, N=5, K=6, b_bs=30))
    assert batched == 4 * 3 * (4 * 6 + 6 * 5 + 4 * 5)
    assert roofline.work("no_such_kernel", {}) is None


def test_causal_attention_counts_the_visible_pairs():
    # a causal 4 x 4 sees 1 + 2 + 3 + 4 = 10 pairs; with 2 extra keys
    # (a cache) row i sees i + 3; without the mask every pair counts
    # per pair: q.k and p v (D = DV = 8), then max, subtract, exp and sum
    per_pair = 2 * 8 + 2 * 8 + 4
    for Sq, Sk, causal, pairs in [(4, 4, 1, 10), (2, 4, 1, 3 + 4),
                                  (3, 5, 0, 15)]:
        for kernel in ("flash_attention_forward",
                       "flash_attention_simple_forward"):
            flops, _ = roofline.work(kernel, dict(
                BH=2, rep=1, Sq=Sq, Sk=Sk, D=8, DV=8, causal=causal))
            assert flops == 2 * pairs * per_pair, kernel


def test_every_count_names_parameters_its_kernel_has():
    found = {}
    for path in sorted(kernel_dir().glob("*.cl")):
        found.update(parse_signatures(kernel_source(path.stem)))
    assert {"matmul_tiled", "adamw_step", "copy"} <= set(WORK)
    for name in WORK:
        assert name in found, f"{name} is counted, but no .cl file has it"
        sizes = {p.name: 3 for p in found[name] if p.kind == "scalar"}
        flops, nbytes = roofline.work(name, sizes)   # a wrong name: KeyError
        assert flops >= 0 and nbytes > 0, name


def test_every_kernel_of_a_training_step_is_counted(queue):
    """Chapter 09's step in miniature, profiled: each kernel it launches
    brought its count (a new kernel without one shows here)."""
    timing = roofline.profiling_queue(queue)
    model = DecoderLM(timing, DecoderConfig(vocab_size=32, dim=16, n_layers=1,
                                            n_heads=2, n_kv_heads=1,
                                            max_seq_len=8))
    opt = AdamW(model.parameters(), lr=1e-3)
    ids = np.arange(16).reshape(2, 8) % 32

    def step():
        with ag.Tape() as tape:
            loss = model.loss(ids, (ids + 1) % 32)
        opt.zero_grad()
        tape.backward(loss)
        clip_grad_norm(model.parameters(), max_norm=1.0)
        opt.step()

    kernels = roofline.profile(timing, step, steps=1)
    uncounted = [k.name for k in kernels if k.flops is None]
    assert len(kernels) > 10 and uncounted == []


def test_profile_counts_each_launch(queue):
    timing = roofline.profiling_queue(queue)
    n = 5000
    a = Tensor.from_host(timing, np.ones(n, np.float32))
    b = Tensor.from_host(timing, np.arange(n, dtype=np.float32))
    kept = []

    def step():                          # two additions a step
        kept[:] = [add_tensors(add_tensors(a, b), b)]

    (add,) = roofline.profile(timing, step, steps=2)
    assert add.name == "add_forward" and add.launches == 2
    assert (add.flops, add.bytes) == (2 * n, 2 * 3 * 4 * n)
    assert 0 < add.seconds < 1
    np.testing.assert_array_equal(kept[0].to_host(), 1 + 2 * np.arange(n))


def test_profile_refuses_steps_that_differ(queue):
    timing = roofline.profiling_queue(queue)
    a = Tensor.from_host(timing, np.ones(10, np.float32))
    calls = []

    def step():                          # one more launch each call
        calls.append(1)
        for _ in range(len(calls)):
            add_tensors(a, a)

    with pytest.raises(RuntimeError, match="different kernel sequences|"
                       "not the same sequence"):
        roofline.profile(timing, step, steps=2)
