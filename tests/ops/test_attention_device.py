"""Which attention kernel runs. By device (functional/flash_attention.py,
``fused_attention``): the fast one on a CPU, the simple one on anything
else, since a GPU work-item cannot hold the fast kernel's 27 KB of private
arrays; that rule is read from the device type alone. By shape (the table
in ``F.scaled_dot_product_attention``'s docstring): a few query rows
against more keys, a decoding step, run the simple one everywhere."""

from types import SimpleNamespace

import numpy as np
import pyopencl as cl
import pytest

import netcl_lite.functional as F
from gradcheck import run_op
from netcl_lite.core.device import device_of, kind_of
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from netcl_lite.functional.flash_attention import kernel_for
from netcl_lite.nn import KVCache, RotaryAttention
from test_flash_attention import gqa_sdpa, gqa_sdpa_vjp, make

T = cl.device_type
# (program, the kernels forward and backward must include)
FAST = ("flash_attention.cl", {"flash_attention_forward",
                               "flash_attention_backward_dq",
                               "flash_attention_backward_dkv"})
SIMPLE = ("flash_attention_simple.cl", {"flash_attention_simple_forward",
                                        "flash_attention_simple_backward_dq",
                                        "flash_attention_simple_backward_dkv"})


@pytest.mark.parametrize("device_type, kernel", [
    (T.CPU, "fast"),
    (T.CPU | T.DEFAULT, "fast"),
    (T.GPU, "simple"),
    (T.GPU | T.DEFAULT, "simple"),
    (T.ACCELERATOR, "simple"),
    (T.CUSTOM, "simple"),
    (T.CPU | T.GPU | T.ACCELERATOR | T.DEFAULT, "simple"),   # Oclgrind
])
def test_kernel_for_a_device_type(device_type, kernel):
    """The device type decides the kind once (core/device.py: kind_of), and
    the kind the kernel."""
    device = SimpleNamespace(kind=kind_of(SimpleNamespace(type=device_type)))
    assert kernel_for(device) == kernel


@pytest.mark.parametrize("op", [F.scaled_dot_product_attention,
                                F.flash_attention])
def test_the_device_type_picks_the_kernel(queue, rng, op):
    """Forward and backward of a small GQA attention, causal, with rows
    that see no key (Sq > Sk): the kernels the trace shows, and the values
    against numpy."""
    # from the device type itself, not from kernel_for: a CPU (and nothing
    # else) runs the fast kernel; a GPU, Oclgrind too, the simple one
    cpu_only = (queue.device.type & ~T.DEFAULT) == T.CPU
    program, kernels = FAST if cpu_only else SIMPLE
    q, k, v = make(rng, (1,), 2, 1, 6, 4, 5, 3)     # GQA, rows 0, 1 see nothing
    g = rng.standard_normal((1, 2, 6, 3))
    with trace() as ran:
        out, grads = run_op(queue, op, [q, k, v], g)
    ran = [name.split(":") for name in ran if name.startswith("flash_attention")]
    assert {file for file, _ in ran} == {program}, ran
    assert kernels <= {kernel for _, kernel in ran}, ran
    np.testing.assert_allclose(out, gqa_sdpa(q, k, v, True), rtol=1e-5,
                               atol=2e-6)
    for got, ref in zip(grads, gqa_sdpa_vjp(q, k, v, g, True)):
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_the_tape_names_flash_attention_on_every_device(queue, rng):
    """Either kernel records the op "flash_attention": a tape reads the same
    on a CPU and a GPU (tests/nn/test_model.py looks for that name)."""
    q, k, v = (Tensor.from_host(queue, x) for x in make(rng, (), 1, 1, 3, 3, 2, 2))
    assert F.scaled_dot_product_attention(q, k, v).op == "flash_attention"
    assert F.flash_attention(q, k, v).op == "flash_attention"
    assert F.flash_attention(q, k, v, kernel="simple").op == \
        "flash_attention_simple"


def device_forward(queue):
    """The forward kernel the device rule (rows 3-4 of the table) picks."""
    if kernel_for(device_of(queue)) == "fast":
        return "flash_attention.cl:flash_attention_forward"
    return "flash_attention_simple.cl:flash_attention_simple_forward"


SIMPLE_FORWARD = "flash_attention_simple.cl:flash_attention_simple_forward"


# (H, HKV, Sq, Sk, d, dv, the forward kernel: "simple", "device" or "naive")
@pytest.mark.parametrize("H, HKV, Sq, Sk, d, dv, kernel", [
    (2, 1, 1, 9, 4, 3, "simple"),      # a decoding step: one row, a cache
    (2, 2, 5, 9, 8, 8, "simple"),      # five new rows against nine keys
    (1, 1, 1, 2, 3, 3, "simple"),
    (2, 1, 5, 5, 4, 4, "device"),      # a short prompt: no cache before it
    (2, 2, 6, 20, 8, 8, "device"),     # a tile of rows: the device's kernel
    (1, 1, 4, 3, 4, 4, "device"),      # Sq > Sk: the first row sees nothing
    (2, 1, 1, 7, 260, 260, "simple"),  # few rows: the plain kernel, any d
    (2, 1, 7, 7, 260, 3, "naive"),     # d > 256: the composed path
])
def test_the_shapes_pick_the_kernel(queue, rng, H, HKV, Sq, Sk, d, dv, kernel):
    """The table in F.scaled_dot_product_attention's docstring, row by row:
    the forward kernel the trace shows, and values and gradients against
    numpy."""
    q, k, v = make(rng, (1,), H, HKV, Sq, Sk, d, dv)
    g = rng.standard_normal((1, H, Sq, dv))
    with trace() as ran:
        out, grads = run_op(queue, F.scaled_dot_product_attention, [q, k, v], g)
    forwards = [name for name in ran if name.endswith("_forward")
                and name.startswith(("flash_attention", "softmax"))]
    want = {"simple": [SIMPLE_FORWARD], "device": [device_forward(queue)],
            "naive": ["softmax.cl:softmax_forward"]}[kernel]
    assert forwards == want, ran
    np.testing.assert_allclose(out, gqa_sdpa(q, k, v, True), rtol=1e-5,
                               atol=2e-6)
    for got, ref in zip(grads, gqa_sdpa_vjp(q, k, v, g, True)):
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_a_cached_step_of_a_module_runs_the_plain_kernel_once(queue, rng):
    """RotaryAttention calls F.scaled_dot_product_attention alone; with a
    KV cache, the op sees one new row against the cache and runs the plain
    kernel, reading k and v where the cache keeps them (no packing)."""
    attn = RotaryAttention(queue, dim=16, n_heads=4, n_kv_heads=2,
                           max_seq_len=12)
    cache = KVCache(1)
    x = rng.standard_normal((2, 9, 16))
    full = attn(Tensor.from_host(queue, x)).value.to_host()      # (B, S, D)
    attn(Tensor.from_host(queue, x[:, :8]), cache=cache.layers[0])
    with trace() as ran:
        step = attn(Tensor.from_host(queue, x[:, 8:]), cache=cache.layers[0])
    attention = [name for name in ran if name.startswith("flash_attention")]
    assert attention == [SIMPLE_FORWARD], ran
    np.testing.assert_allclose(step.value.to_host(), full[:, 8:], rtol=1e-5,
                               atol=1e-5)


def test_kernel_names_the_kernel_and_fast_still_works_with_a_warning(queue, rng):
    """``kernel="simple"`` runs flash_attention_simple.cl; the old spelling
    ``fast=False`` (chapters used it) does the same and warns."""
    q, k, v = (Tensor.from_host(queue, x) for x in make(rng, (), 1, 1, 3, 3, 2, 2))
    with trace() as ran:
        F.flash_attention(q, k, v, kernel="simple")
    with pytest.warns(DeprecationWarning, match='kernel="simple"'), \
            trace() as old:
        F.flash_attention(q, k, v, fast=False)
    assert old == ran and ran[0].startswith("flash_attention_simple.cl:")
    with pytest.warns(DeprecationWarning), trace() as default:
        F.flash_attention(q, k, v, fast=True)
    with trace() as device_choice:
        F.flash_attention(q, k, v)
    assert default == device_choice
    with pytest.raises(ValueError, match=r"kernel must be one of \(None, "
                                         r"'simple'\), got 'fast'"):
        F.flash_attention(q, k, v, kernel="fast")
