"""Which attention kernel a device runs (functional/flash_attention.py,
``fused_attention``): the fast one on a CPU, the simple one on anything
else, since a GPU work-item cannot hold the fast kernel's 27 KB of private
arrays. The rule is read from the device type alone."""

from types import SimpleNamespace

import numpy as np
import pyopencl as cl
import pytest

import netcl_lite.functional as F
from gradcheck import run_op
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from netcl_lite.functional.flash_attention import kernel_for
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
    assert kernel_for(SimpleNamespace(type=device_type)) == kernel


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
    assert F.flash_attention(q, k, v, fast=False).op == "flash_attention_simple"
