"""One set of validators (core/validate.py: check_int, check_number) for the
numbers that configure ops and modules, and ValueErrors, never raw
AttributeErrors or KeyErrors, for a wrong device or kernel name."""

import re

import numpy as np
import pytest

import netcl_lite.functional as F
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.validate import check_int, check_number
from netcl_lite.nn import MultiHeadAttention, RMSNorm, RotaryAttention
from netcl_lite.nn.feed_forward import SwiGLU
from netcl_lite.nn.kv_cache import KVCache
from netcl_lite.optim import AdamW


@pytest.mark.parametrize("value", [True, False, np.bool_(True), 2.0, "2",
                                   None, np.float32(2)])
def test_check_int_refuses_what_is_not_an_int(value):
    with pytest.raises(ValueError, match=re.escape(f"op: n must be an int, "
                                                   f"got {value!r}")):
        check_int(value, "op", "n")


def test_check_int_bounds_and_words():
    assert check_int(np.int64(3), "op", "n", low=1) == 3
    assert type(check_int(np.int32(3), "op", "n")) is int
    for value, low, high, words in [(0, 1, None, "a positive integer"),
                                    (-1, 0, None, "an int >= 0"),
                                    (10, 0, 9, r"an int in \[0, 9\]")]:
        with pytest.raises(ValueError, match=f"n must be {words}, got {value}"):
            check_int(value, "op", "n", low, high)


@pytest.mark.parametrize("value", [True, float("nan"), float("inf"), "1",
                                   None, np.bool_(False)])
def test_check_number_refuses_what_is_not_a_finite_number(value):
    with pytest.raises(ValueError, match="op: x must be a finite number"):
        check_number(value, "op", "x")


def test_check_number_bounds_and_words():
    assert check_number(np.float32(0.5), "op", "x", 0.0, 1.0) == 0.5
    assert check_number(3, "op", "x") == 3.0
    for value, kw, words in [(0, dict(low=0, low_open=True), "a positive number"),
                             (-1, dict(low=0), "a number >= 0"),
                             (1.0, dict(low=0, high=1), r"a number in \[0, 1\)")]:
        with pytest.raises(ValueError, match=f"x must be {words}, got {value}"):
            check_number(value, "op", "x", **kw)


@pytest.mark.parametrize("make, match", [
    (lambda q: MultiHeadAttention(q, 8, True), "n_heads must be a positive integer, "
                                               "got True"),
    (lambda q: MultiHeadAttention(q, True, 1), "dim must be a positive integer"),
    (lambda q: RotaryAttention(q, 8, 2, True, 16), "n_kv_heads must be a positive"),
    (lambda q: RMSNorm(q, True), "RMSNorm: dim must be a positive integer"),
    (lambda q: SwiGLU(q, 8, True), "SwiGLU: hidden_dim must be a positive integer"),
    (lambda q: KVCache(True), "KVCache: n_layers must be positive, got True"),
])
def test_a_bool_is_not_a_size(queue, make, match):
    """``n_heads=True`` used to build a one-head attention."""
    with pytest.raises(ValueError, match=match):
        make(queue)


def test_op_arguments_go_through_the_validators(queue):
    x = Tensor.from_host(queue, np.ones((2, 4)))
    cases = [(lambda: F.rope(x, offset=True), "rope: offset must be an int, got True"),
             (lambda: F.rope(x, base=0.0), "rope: base must be a positive number"),
             (lambda: F.rope(x, scale=-1.0), "rope: scale must be a number >= 0"),
             (lambda: F.rms_norm(x, Tensor.from_host(queue, np.ones(4)), eps=True),
              "rms_norm: eps must be a number >= 0, got True"),
             (lambda: F.repeat_kv(x.reshape(1, 1, 2, 4), True),
              "repeat_kv: n_rep must be a positive integer, got True"),
             (lambda: F.flash_attention(x, x, x, scale=True),
              "flash_attention: scale must be a positive number or None")]
    for call, match in cases:
        with pytest.raises(ValueError, match=match):
            call()


def test_adamw_names_its_bad_hyperparameters(queue):
    import netcl_lite.autograd as ag
    w = ag.tensor(Tensor.from_host(queue, np.ones(2)))
    with pytest.raises(ValueError, match=r"AdamW: beta1 must be a number in "
                                         r"\[0.0, 1.0\), got 1.0"):
        AdamW([w], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="AdamW: lr must be a number >= 0.0, "
                                         "got True"):
        AdamW([w], lr=True)


def test_a_device_that_is_not_one_is_a_value_error():
    for call in (lambda: Tensor.empty("x", (3,)),
                 lambda: Tensor.from_host(None, np.ones(3)),
                 lambda: launch("x", "elementwise", "scale_forward", (1,),
                                LOCAL_1D)):
        with pytest.raises(ValueError, match="expected a netcl_lite Device or a "
                                             "pyopencl CommandQueue, got"):
            call()


def test_a_bad_kernel_name_lists_the_files_kernels(queue):
    x = Tensor.from_host(queue, np.ones(4))
    with pytest.raises(ValueError, match=r"kernels/elementwise.cl has no kernel "
                                         r"'scale_forwad'; its kernels are "
                                         r"\[.*'scale_forward'"):
        launch(queue, "elementwise", "scale_forwad", (4,), LOCAL_1D, x, x, 2.0, 4)
    with pytest.raises(ValueError, match="no kernel file kernels/elementwse.cl"):
        launch(queue, "elementwse", "scale_forward", (4,), LOCAL_1D, x, x, 2.0, 4)
