"""``Module``: a container of parameter nodes and sub-modules.

>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn import Linear
>>> lin = Linear(manager.default("cpu").queue, 4, 3, seed=0)
>>> [(name, p.shape) for name, p in lin.named_parameters()]
[('weight', (4, 3))]

A model read from a file (``DecoderLM.from_gguf``) is built inside
``deferred_init()``: its parameters get device buffers of the right shapes,
left unwritten, and no random numbers are drawn, since the file's weights
replace them next. A 135M-parameter model would otherwise draw and upload
540 MB of numbers only to throw them away.

>>> with deferred_init():
...     empty = Linear(manager.default("cpu").queue, 4, 3, seed=0)
>>> empty.weight.shape                  # allocated, not initialised
(4, 3)
"""

import contextlib
import contextvars

import numpy as np

from netcl_lite.autograd import Node
from netcl_lite.core.tensor import Tensor

# True inside deferred_init(): parameters are allocated, never initialised
_DEFERRED = contextvars.ContextVar("deferred_init", default=False)


@contextlib.contextmanager
def deferred_init():
    """Build modules whose weights a loader writes next (see above)."""
    token = _DEFERRED.set(True)
    try:
        yield
    finally:
        _DEFERRED.reset(token)


def parameter(queue, array, name):
    """A float32 leaf node that wants a gradient (inside ``deferred_init``:
    an unwritten buffer of the array's shape)."""
    if _DEFERRED.get():
        return Node(Tensor.empty(queue, np.shape(array)), requires_grad=True,
                    name=name)
    return Node(Tensor.from_host(queue, array), requires_grad=True, name=name)


def normal_init(rng, fan_in, shape):
    """N(0, 1/fan_in): keeps x @ W at the scale of x (chapter 03's argument).
    Inside ``deferred_init`` nothing is drawn: a zero-stride stand-in of
    the shape, which takes no memory."""
    if _DEFERRED.get():
        return np.broadcast_to(np.float32(0), shape)
    return rng.standard_normal(shape) / np.sqrt(fan_in)


class Module:
    """Finds parameters among its attributes, in the order they were set."""

    def named_parameters(self, prefix=""):
        for key, value in vars(self).items():
            if isinstance(value, Node) and value.requires_grad:
                yield prefix + key, value
            elif isinstance(value, Module):
                yield from value.named_parameters(prefix + key + ".")
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        yield from item.named_parameters(f"{prefix}{key}.{i}.")

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward")
