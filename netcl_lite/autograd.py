"""A tape autograd: ops record themselves while a ``Tape`` is open, and
``tape.backward(loss)`` replays the records in reverse, with no recursion.

>>> import numpy as np
>>> import netcl_lite.autograd as ag
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> with ag.Tape() as tape:
...     x = ag.tensor(Tensor.from_host(queue, np.array([1.0, 2.0, 3.0])))
...     loss = F.sum(F.mul(x, x))          # loss = sum(x^2)
>>> tape.backward(loss)
>>> x.grad.to_host()                       # d loss / dx = 2x
array([2., 4., 6.], dtype=float32)

Each op in ``netcl_lite.functional`` calls ``record(value, inputs, backward)``
where ``backward(grad_out)`` returns one gradient (or None) per input.
"""

import numpy as np

from netcl_lite.core.tensor import FLOAT, Tensor
from netcl_lite.core.tensor_ops import add_tensors
from netcl_lite.core.validate import check_tensors

_active = []  # the stack of open tapes; ops record on the innermost one


class Node:
    """A value in the graph: ``value`` (a Tensor) and, after backward, ``grad``."""

    def __init__(self, value, requires_grad=False, name=None):
        if not isinstance(value, Tensor):
            raise ValueError(
                f"a node holds a netcl_lite Tensor, got {type(value).__name__}"
            )
        self.value = value
        self.grad = None
        self.requires_grad = bool(requires_grad)
        self.name = name

    @property
    def shape(self):
        return self.value.shape

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def queue(self):
        return self.value.queue

    def __repr__(self):
        label = f"{self.name!r}, " if self.name else ""
        return f"Node({label}shape={self.shape}, requires_grad={self.requires_grad})"


def tensor(value, requires_grad=True, name=None):
    """A leaf node. Gradients land in ``.grad`` after ``tape.backward``."""
    if isinstance(value, Node):
        value = value.value
    if requires_grad and value.dtype != np.float32:
        raise ValueError(
            f"only float32 leaves can require a gradient, got {value.dtype}"
        )
    return Node(value, requires_grad=requires_grad, name=name)


def as_node(x):
    """Ops accept nodes or bare Tensors (treated as constants)."""
    if isinstance(x, Node):
        return x
    if isinstance(x, Tensor):
        return Node(x, requires_grad=False)
    hint = ""
    if isinstance(x, (np.ndarray, list, tuple, float, int)):
        hint = ("; copy host data to the device first: "
                "Tensor.from_host(queue, array), then ag.tensor(t) for a "
                "leaf that needs a gradient")
    raise ValueError(f"expected a Node or a Tensor, got {type(x).__name__}{hint}")


def nodes(*xs, dtype=FLOAT, op="op"):
    """An op's inputs as nodes, checked: one OpenCL context and ``dtype``
    (``dtype=None``: any dtype). ``op`` names the op in the error."""
    out = [as_node(x) for x in xs]
    check_tensors([node.value for node in out], dtype, op)
    return out


def record(value, inputs, backward):
    """Wrap an op's output in a node and, if a tape is open, remember how to
    send its gradient back to ``inputs``."""
    needs_grad = any(node.requires_grad for node in inputs)
    out = Node(value, requires_grad=needs_grad)
    if needs_grad and _active:
        _active[-1].records.append((out, tuple(inputs), backward))
    return out


class Tape:
    """Records ops in execution order; ``backward`` replays them reversed."""

    def __init__(self):
        self.records = []  # [(output node, input nodes, backward fn)]

    def __enter__(self):
        _active.append(self)
        return self

    def __exit__(self, *exc):
        _active.remove(self)
        return False

    def backward(self, loss, grad=None):
        """Send d loss / d node to every node that requires a gradient.

        ``loss`` must be a scalar (one element) unless ``grad`` is given.
        Leaf gradients accumulate across calls, as in PyTorch.
        """
        loss = as_node(loss)
        if grad is None:
            if loss.value.size != 1:
                raise ValueError(
                    f"backward needs a scalar loss or an explicit grad; "
                    f"loss has shape {loss.shape}"
                )
            grad = Tensor.from_host(loss.queue, np.ones(loss.shape, np.float32))
        elif grad.shape != loss.shape:
            raise ValueError(f"grad shape {grad.shape} != loss shape {loss.shape}")
        for out, _, _ in self.records:  # intermediate grads start afresh
            out.grad = None
        loss.grad = grad
        for out, inputs, backward in reversed(self.records):
            if out.grad is None:
                continue  # this op does not reach the loss
            grads = backward(out.grad)
            for node, g in zip(inputs, grads):
                if g is None or not node.requires_grad:
                    continue
                node.grad = g if node.grad is None else add_tensors(node.grad, g)
