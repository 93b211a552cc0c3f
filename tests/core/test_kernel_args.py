"""launch checks every argument against the kernel's signature, which
OpenCL reports (clGetKernelArgInfo), before the kernel runs; the source's
own signatures, read by regular expressions, are the fallback and agree."""

import numpy as np
import pyopencl as cl
import pytest

from netcl_lite.core.device import device_of
from netcl_lite.core.program import (LOCAL_1D, kernel_dir, kernel_source, kernels,
                                     launch)
from netcl_lite.core.signature import (BUFFER_DTYPES, FLOATS, INTS,
                                       RAW_BUFFER_DTYPES, from_kernel,
                                       parse_signatures, read_signatures)
from netcl_lite.core.tensor import Tensor

# the build options a kernel file needs (it has no defaults for them)
NEEDS = {"matmul": ("-DVW=4", "-DTILE_M=4", "-DTILE_V=2"),
         "roofline": ("-DVW=4",), "exp_poly": ("-DEXP_POLY_TEST",)}


def scale(queue, *args):
    launch(queue, "elementwise", "scale_forward", (4,), LOCAL_1D, *args)


def test_swapped_c_and_n_are_refused(queue):
    """The review's case: c and n swapped used to return 7e-45 values."""
    x = Tensor.from_host(queue, np.ones(4))
    out = Tensor.zeros(queue, (4,))
    with pytest.raises(ValueError, match=r"elementwise.cl:scale_forward: argument 3 "
                                         r"'c' is a float, got int 4"):
        scale(queue, x, out, 4, 3.0)
    assert not out.to_host().any()                     # nothing ran
    scale(queue, x, out, 3.0, 4)
    np.testing.assert_array_equal(out.to_host(), [3.0] * 4)


def test_each_kind_of_mismatch_names_the_kernel_and_argument(queue):
    x = Tensor.from_host(queue, np.ones(4))
    ids = Tensor.from_host(queue, np.arange(4))        # int32
    cases = [
        ((x, x, 3.0), r"scale_forward takes 4 arguments \(x, out, c, n\), got 3"),
        ((x, x, 3.0, 4, 5), r"takes 4 arguments .*got 5"),
        ((x, 3.0, 3.0, 4), r"argument 2 'out' is a __global float buffer.*"
                           r"got float 3.0"),
        ((ids, x, 3.0, 4), r"argument 1 'x' is a __global float buffer: pass a "
                           r"float32 Tensor, got a int32 Tensor \(4,\)"),
        ((x, x, x, 4), r"argument 3 'c' is a float scalar, got a float32 Tensor"),
        ((x, x, 3.0, 4.0), r"argument 4 'n' is an int, got float 4.0"),
        ((x, x, 3.0, 2**31), r"argument 4 'n' = 2147483648 does not fit in int"),
        ((x, x, 3.0, np.float32(4)), r"argument 4 'n' is an int, got float32"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            scale(queue, *args)


def test_numbers_are_cast_to_the_kernel_types(queue):
    x = Tensor.from_host(queue, np.ones(4))
    for c, n in [(2.0, 4), (np.float64(2.0), np.int64(4)), (np.float32(2), True)]:
        out = Tensor.zeros(queue, (4,))
        scale(queue, x, out, c, n)
        assert out.to_host()[0] == 2.0


def test_every_kernel_signature_is_read_with_known_types():
    files = sorted(kernel_dir().glob("*.cl"))
    assert len(files) >= 10
    for path in files:
        source = kernel_source(path.stem)
        signatures = parse_signatures(source)
        assert len(signatures) == source.count("__kernel"), path.name
        for kernel, params in signatures.items():
            for p in params:
                known = ({**BUFFER_DTYPES, **RAW_BUFFER_DTYPES}
                         if p.kind == "buffer" else {**INTS, **FLOATS})
                assert p.kind == "local" or p.ctype in known, (kernel, p)


def test_opencl_and_the_source_agree_on_every_signature(queue):
    """Each kernel of each file, built on this device: the parameters OpenCL
    reports are those the source parse reads (names, buffer, local or
    scalar, element type), and ``read_signatures`` gives them either way.
    PoCL and Oclgrind always report them; Intel's runtime not for a program
    pyopencl loaded from its binary cache (core/signature.py). The parse
    does not read ``#ifdef``s, so it may list a kernel that a build leaves
    out (exp_poly.cl's test kernel)."""
    device, reported = device_of(queue), 0
    for path in sorted(kernel_dir().glob("*.cl")):
        built = kernels(queue, path.stem, NEEDS.get(path.stem, ()))
        source = kernel_source(path.stem)
        parsed = parse_signatures(source)
        assert set(built) <= set(parsed), path.name
        assert read_signatures(built, source) == {n: parsed[n] for n in built}
        for name, knl in built.items():
            try:
                from_opencl = from_kernel(knl)
            except cl.Error:
                assert device.implementation == "intel", (path.name, name)
                continue
            assert from_opencl == parsed[name], (path.name, name)
            reported += 1
    if device.implementation in ("pocl", "oclgrind"):
        assert reported >= 50


class NoArgInfo:
    """A built kernel of an implementation that keeps no argument info."""
    num_args = 4

    def get_arg_info(self, index, param):
        raise cl.RuntimeError("clGetKernelArgInfo failed: "
                              "KERNEL_ARG_INFO_NOT_AVAILABLE")


def test_without_argument_info_the_source_is_parsed():
    source = kernel_source("elementwise")
    found = read_signatures({"scale_forward": NoArgInfo()}, source)
    assert found == {"scale_forward": parse_signatures(source)["scale_forward"]}
    assert [p.name for p in found["scale_forward"]] == ["x", "out", "c", "n"]
    with pytest.raises(RuntimeError, match="cannot read the signature of kernel "
                                           "'not_there'"):
        read_signatures({"not_there": NoArgInfo()}, source)
