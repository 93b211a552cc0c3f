"""Careless input that used to crash or give a silently wrong answer."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pyopencl as cl
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional as F
from netcl_lite.core.tensor import Tensor
from netcl_lite.nn import RotaryAttention
from netcl_lite.nn.kv_cache import LayerCache


def test_tensor_over_a_too_small_buffer(queue):
    small = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 16)
    with pytest.raises(ValueError, match=r"\(100,\) needs .* 400 bytes.* 16 bytes"):
        Tensor(queue, small, (100,), np.float32)
    with pytest.raises(ValueError, match="cl.Buffer"):
        Tensor(queue, np.zeros(4, np.float32), (4,), np.float32)
    assert Tensor(queue, small, (2, 2), np.float32).shape == (2, 2)


def test_allocation_beyond_the_device_names_shape_and_bytes(queue):
    with pytest.raises(ValueError, match=r"\(2, 1099511627776\) would take "
                                         r"8796093022208 bytes"):
        Tensor.empty(queue, (2, 2**40))
    x = Tensor.from_host(queue, np.zeros((1, 60000, 8), np.float32))
    with pytest.raises(ValueError, match=r"\(1, 60000, 60000\).* 43200000000 bytes"):
        F.attention_naive(x, x, x)


LIMITED = textwrap.dedent("""
    import resource
    import numpy as np
    import netcl_lite.functional as F
    from netcl_lite.core.device import manager
    from netcl_lite.core.tensor import Tensor, host_bytes_left
    q = manager.default("cpu").queue
    x = Tensor.from_host(q, np.zeros((1, 8, 8), np.float32))
    F.attention_naive(x, x, x).value.to_host()        # kernels built, warm
    used = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0])
    limit = used * 1024 + 2 * 2**30                    # 2 GiB more than now
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    x = Tensor.from_host(q, np.zeros((1, 20000, 8), np.float32))
    try:
        F.attention_naive(x, x, x).value.to_host()
    except ValueError as err:
        print(err)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, rlimit")
def test_naive_attention_under_a_process_memory_limit():
    done = subprocess.run([sys.executable, "-c", LIMITED], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "(1, 20000, 20000)" in done.stdout and "ulimit -v" in done.stdout, \
        done.stdout


def test_from_host_float64_beyond_float32(queue):
    with pytest.raises(ValueError, match=r"1e\+300 at index \(1,\)"):
        Tensor.from_host(queue, np.array([1.0, 1e300]))
    kept = Tensor.from_host(queue, np.array([np.inf, -np.inf, np.nan, 3e38]))
    np.testing.assert_array_equal(kept.to_host()[:2], [np.inf, -np.inf])
    assert np.isnan(kept.to_host()[2])


def test_backward_checks_the_explicit_grad(queue):
    with ag.Tape() as tape:
        x = ag.tensor(Tensor.from_host(queue, np.ones(3)))
        y = F.mul(x, x)
    ints = Tensor.from_host(queue, np.ones(3, np.int32))
    with pytest.raises(ValueError, match="int32"):
        tape.backward(y, grad=ints)
    context = cl.Context([queue.device])     # held: see core/device.py
    other = cl.CommandQueue(context)
    with pytest.raises(ValueError, match="another OpenCL context"):
        tape.backward(y, grad=Tensor.from_host(other, np.ones(3)))
    with pytest.raises(ValueError, match="ndarray"):
        tape.backward(y, grad=np.ones(3))
    tape.backward(y, grad=Tensor.from_host(queue, np.ones(3)))
    np.testing.assert_allclose(x.grad.to_host(), [2, 2, 2])


def test_rotary_attention_takes_its_offset_from_the_cache(queue, rng):
    attn = RotaryAttention(queue, dim=8, n_heads=2, n_kv_heads=1, max_seq_len=8)
    x = rng.standard_normal((1, 5, 8)).astype(np.float32)
    full = attn(Tensor.from_host(queue, x)).value.to_host()      # no cache
    cache = LayerCache()
    attn(Tensor.from_host(queue, x[:, :3]), cache=cache)
    step = attn(Tensor.from_host(queue, x[:, 3:]), cache=cache)  # no offset
    np.testing.assert_allclose(step.value.to_host(), full[:, 3:], atol=1e-5)
    with pytest.raises(ValueError, match="offset 0 does not follow the cache"):
        attn(Tensor.from_host(queue, x[:, :1]), offset=0, cache=cache)
