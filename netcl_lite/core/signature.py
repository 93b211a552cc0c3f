"""Kernel signatures, as OpenCL reports them, and the check of every
argument a launch passes against them.

OpenCL itself checks nothing: a float handed to an ``int`` parameter is
copied bit for bit (3.0f reads as 1077936128), and a buffer handed to a
scalar parameter can crash the process. So ``launch`` checks each argument
as a compiler would, before the kernel runs: the count, buffer or scalar,
the element type of a buffer, int or float for a scalar, and the range of
an int. A mismatch is a ValueError naming the kernel and the parameter.

The parameters come from OpenCL itself: a program built with the option
``-cl-kernel-arg-info`` answers ``clGetKernelArgInfo`` (pyopencl's
``Kernel.get_arg_info``) with each parameter's name, type and address
space (``from_kernel``). PoCL 3.0 and 3.1 and Oclgrind 21.10 always do.
Intel's CPU runtime (2026.2) does for a program compiled from source, but
not for one that pyopencl loads from its cache of built binaries (every
process after the first): OpenCL lets it refuse,
``CL_KERNEL_ARG_INFO_NOT_AVAILABLE``. There the signatures are read from
the ``.cl`` source instead (``parse_signatures``, regular expressions that
know the few forms our kernels use); ``read_signatures`` picks, kernel by
kernel, and ``tests/core/test_kernel_args.py`` checks that both agree.

>>> source = '''
... __kernel void scale_forward(__global const float *x, __global float *out,
...                             const float c, const int n) { }
... '''
>>> sig = parse_signatures(source)["scale_forward"]
>>> for p in sig:
...     print(p.name, p.kind, p.ctype)
x buffer float
out buffer float
c scalar float
n scalar int
>>> check_args("elementwise.cl:scale_forward", sig[2:], (7, 2.0))   # c, n
Traceback (most recent call last):
...
ValueError: elementwise.cl:scale_forward: argument 1 'c' is a float, got int 7
"""

import re
from collections import namedtuple

import numpy as np
import pyopencl as cl

Param = namedtuple("Param", "name kind ctype")  # kind: buffer | local | scalar

# C scalar types -> the numpy type a launch passes for them
INTS = {"char": np.int8, "uchar": np.uint8, "short": np.int16,
        "ushort": np.uint16, "int": np.int32, "uint": np.uint32,
        "long": np.int64, "ulong": np.uint64}
FLOATS = {"float": np.float32, "double": np.float64}
# element type of a buffer -> the Tensor dtype it holds
BUFFER_DTYPES = {"float": np.dtype(np.float32), "int": np.dtype(np.int32)}
# ... and of the raw buffers of quantised weights (core/quantized.py: a
# block's float16 scales and its byte codes), which are not Tensors
RAW_BUFFER_DTYPES = {"half": np.dtype(np.float16), "uchar": np.dtype(np.uint8)}
RANGES = {c: (int(np.iinfo(t).min), int(np.iinfo(t).max)) for c, t in INTS.items()}

# "__kernel void name(...)", also with an attribute or a macro before void
# ("__kernel WIDE void matmul_tiled(...)", kernels/register_tile.cl)
ARG_INFO = ("-cl-kernel-arg-info",)   # the build option that keeps them

_KERNEL = re.compile(r"__kernel\b[^;{}]*?\bvoid\s+(\w+)\s*\(([^)]*)\)")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _param(text):
    """'__global const float8 *x' -> Param('x', 'buffer', 'float')."""
    words = text.replace("*", " * ").split()
    name = words[-1]
    base = [w for w in words[:-1] if w not in
            ("const", "restrict", "__restrict", "volatile", "*", "__global",
             "global", "__local", "local", "__constant", "constant")]
    ctype = re.sub(r"\d+$", "", base[-1]) if base else "?"  # float8 -> float
    if "*" in words:
        local = "__local" in words or "local" in words
        return Param(name, "local" if local else "buffer", ctype)
    return Param(name, "scalar", ctype)


# what check_args expects of each parameter, as a small code (its plan):
FLOAT_BUFFER, INT_BUFFER, INT_SCALAR, FLOAT_SCALAR, OTHER = range(5)


def _code(p):
    if p.kind == "buffer" and p.ctype in ("float", "int"):
        return FLOAT_BUFFER if p.ctype == "float" else INT_BUFFER
    if p.kind == "scalar" and p.ctype in ("int", "float"):
        return INT_SCALAR if p.ctype == "int" else FLOAT_SCALAR
    return OTHER


class Signature(list):
    """A kernel's [Param, ...], with ``plan``: one code per parameter, so
    that checking a launch's arguments starts without reading the Params.

    >>> Signature([Param("x", "buffer", "float"), Param("n", "scalar", "int")]).plan
    (0, 2)
    """

    def __init__(self, params):
        super().__init__(params)
        self.plan = tuple(_code(p) for p in self)


def parse_signatures(source):
    """{kernel name: [Param, ...]} for every ``__kernel`` in a .cl source:
    the fallback where OpenCL keeps no argument info (see above)."""
    source = _COMMENTS.sub(" ", source)
    return {m.group(1): Signature(_param(p) for p in m.group(2).split(",")
                                  if p.strip())
            for m in _KERNEL.finditer(source)}


def from_kernel(kernel):
    """A built kernel's Signature, from ``Kernel.get_arg_info``: the type
    name ("float8*", "int") gives the element type, the address space
    buffer or local memory. A cl.Error when the implementation keeps no
    argument info."""
    info, space = cl.kernel_arg_info, cl.kernel_arg_address_qualifier
    params = []
    for i in range(kernel.num_args):
        type_name = kernel.get_arg_info(i, info.TYPE_NAME).strip()
        name = kernel.get_arg_info(i, info.NAME)
        ctype = re.sub(r"\d+$", "", type_name.rstrip("*").split()[-1])
        if not type_name.endswith("*"):
            params.append(Param(name, "scalar", ctype))
            continue
        local = kernel.get_arg_info(i, info.ADDRESS_QUALIFIER) == space.LOCAL
        params.append(Param(name, "local" if local else "buffer", ctype))
    return Signature(params)


def read_signatures(kernels, source):
    """{name: Signature} for the built kernels {name: cl.Kernel} of one
    program: from OpenCL (``from_kernel``) where the implementation keeps
    the argument info, else parsed from the program's ``source``."""
    found, parsed = {}, None
    for name, kernel in kernels.items():
        try:
            found[name] = from_kernel(kernel)
        except cl.Error:          # CL_KERNEL_ARG_INFO_NOT_AVAILABLE
            parsed = parse_signatures(source) if parsed is None else parsed
            if name not in parsed:
                raise RuntimeError(f"cannot read the signature of kernel "
                                   f"{name!r}: this OpenCL keeps no argument "
                                   "info, and the source parse missed it"
                                   ) from None
            found[name] = parsed[name]
    return found


def scalar_dtypes(params):
    """The numpy type of each scalar parameter, None for buffers and local
    memory: what ``cl.Kernel.set_scalar_arg_dtypes`` wants. With it set,
    pyopencl packs the numbers itself; without it each scalar argument
    took about 7 us on the host (a 15-argument matmul, 0.1 ms a launch).

    >>> sig = parse_signatures("__kernel void f(__global float *x, int n) {}")
    >>> scalar_dtypes(sig["f"])
    [None, <class 'numpy.int32'>]
    """
    return [None if p.kind != "scalar" else
            INTS.get(p.ctype) or FLOATS.get(p.ctype) for p in params]


def _describe(value):
    """5 -> 'int 5', a Tensor -> 'a float32 Tensor (2, 3)'."""
    if hasattr(value, "buffer") and hasattr(value, "dtype"):
        return f"a {value.dtype} Tensor {getattr(value, 'shape', '')}".rstrip()
    if isinstance(value, (bool, int, float, np.generic)):
        return f"{type(value).__name__} {value!r}"
    return type(value).__name__


def _fail(where, i, p, want, value):
    raise ValueError(f"{where}: argument {i + 1} {p.name!r} is {want}, "
                     f"got {_describe(value)}")


def _scalar(where, i, p, value):
    """A Python or numpy number -> the numpy scalar type of the parameter."""
    if p.ctype in INTS:
        if not isinstance(value, (bool, int, np.integer)):
            _fail(where, i, p, f"an {p.ctype}", value)
        low, high = RANGES[p.ctype]
        if not low <= value <= high:
            raise ValueError(f"{where}: argument {i + 1} {p.name!r} = {value} "
                             f"does not fit in {p.ctype} [{low}, {high}]")
        return INTS[p.ctype](value)
    if p.ctype in FLOATS:
        if isinstance(value, (bool, int, np.integer)) or \
                not isinstance(value, (float, np.floating)):
            _fail(where, i, p, f"a {p.ctype}", value)
        return FLOATS[p.ctype](value)
    return value  # a type this checker does not know: passed as it is


def check_args(where, params, args):
    """The arguments of one launch, checked against the kernel's parameters
    and converted: Tensors to their buffers, numbers to their C types.

    It runs before every launch, so the common cases (a Tensor of the right
    dtype, a Python int for an int, a float for a float) take a short way
    through the signature's plan; anything else gets the full check.
    """
    if len(args) != len(params):
        names = ", ".join(p.name for p in params)
        raise ValueError(f"{where} takes {len(params)} arguments ({names}), "
                         f"got {len(args)}")
    plan = getattr(params, "plan", None) or tuple(_code(p) for p in params)
    out = list(args)
    for i, code in enumerate(plan):
        value = out[i]
        if code <= INT_BUFFER:
            want = _FLOAT if code == FLOAT_BUFFER else _INT
            if getattr(value, "dtype", None) is want and hasattr(value, "buffer"):
                out[i] = value.buffer
                continue
        elif code == INT_SCALAR:
            if type(value) is int and -2**31 <= value < 2**31:
                continue            # pyopencl packs it (set_scalar_arg_dtypes)
        elif code == FLOAT_SCALAR:
            if type(value) is float:
                continue
        out[i] = _check_one(where, i, params[i], value)
    return out


_FLOAT, _INT = BUFFER_DTYPES["float"], BUFFER_DTYPES["int"]


def _check_one(where, i, p, value):
    """One argument, the full check: its converted value or a ValueError."""
    if p.kind == "buffer":
        want = BUFFER_DTYPES.get(p.ctype) or RAW_BUFFER_DTYPES.get(p.ctype)
        dtype = getattr(value, "dtype", None)
        if not hasattr(value, "buffer") or dtype is None or \
                (want is not None and dtype is not want and dtype != want):
            what = {"float": "a float32 Tensor", "int": "an int32 Tensor",
                    "half": "the float16 scales of a QuantizedWeight",
                    "uchar": "the uint8 codes of a QuantizedWeight"}.get(
                        p.ctype, "a device buffer")
            _fail(where, i, p, f"a __global {p.ctype} buffer: pass {what}",
                  value)
        return value.buffer
    if p.kind == "local":
        if not isinstance(value, cl.LocalMemory):
            _fail(where, i, p, "__local memory: pass cl.LocalMemory(nbytes)",
                  value)
        return value
    if hasattr(value, "buffer"):
        _fail(where, i, p, f"a {p.ctype} scalar", value)
    return _scalar(where, i, p, value)
