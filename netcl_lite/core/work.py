"""The FLOPs and bytes of each kernel launch, counted beside the launch.

Chapter 13 places a training step's kernels on the device's roofline
(``core/roofline.py``), and for that it needs each launch's work: its
floating-point operations and the bytes it must move. Each count is
written next to the code that launches the kernel, as a function of the
launch's size arguments (a dict by parameter name, as in the kernel's
signature), registered with ``@counts("kernel_name")``. A new kernel brings
its own count; ``work`` looks it up.

The counts are a model: FLOPs count +, -, *, / and one exp, sqrt or max as
1 each; bytes are the compulsory traffic, every input read once and every
output written once (float32 and int32: ``FLOAT`` = 4 bytes a value).

>>> @counts("my_copy_kernel")
... def _(a):                 # n values read and written, no arithmetic
...     return 0, 2 * FLOAT * a["n"]
>>> work("my_copy_kernel", {"n": 1000})
(0, 8000)
>>> work("no_such_kernel", {}) is None
True
>>> del WORK["my_copy_kernel"]
"""

FLOAT = 4          # bytes per float32 or int32 value
# The online softmax of each visible (query, key) pair of a fused attention
# kernel costs SOFTMAX FLOPs on top of its products: forward, the row max,
# - m, exp and the sum; backward, - lse, exp, dP - Drow and * P. Per-row work
# (the rescale by alpha, at most DV per row and block of keys) is left out.
SOFTMAX = 4
# kernel name -> count(sizes) -> (FLOPs, bytes). An op's counts are
# registered when its module is imported (netcl_lite.functional and
# netcl_lite.optim hold the training step's).
WORK = {}


def counts(*kernels):
    """Register the decorated ``count(sizes) -> (FLOPs, bytes)`` for each
    named kernel; a kernel counted by two functions is a ValueError."""
    def register(count):
        for name in kernels:
            if WORK.get(name, count) is not count:
                raise ValueError(f"{name} is counted twice: {WORK[name]} "
                                 f"and {count}")
            WORK[name] = count
        return count
    return register


def work(kernel, sizes):
    """(FLOPs, bytes) of one launch of ``kernel`` with these size arguments
    (a dict by parameter name); None for a kernel nothing counts."""
    count = WORK.get(kernel)
    return None if count is None else tuple(int(v) for v in count(sizes))


def visible(Sq, Sk, causal):
    """How many (query, key) pairs attention scores: all Sq * Sk, or with the
    causal mask, query i sees keys 0 .. i + (Sk - Sq).

    >>> visible(4, 4, True), visible(2, 4, True), visible(3, 5, False)
    (10, 7, 15)
    """
    if not causal:
        return Sq * Sk
    return sum(max(0, min(Sk, i + 1 + Sk - Sq)) for i in range(Sq))
