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

Each op in ``netcl_lite.functional`` calls
``record(value, inputs, backward, op)`` where ``backward(grad_out)`` returns
one gradient (or None) per input and ``op`` is the op's name: the output
node keeps it as ``.op``, so a tape can be read back as a list of ops.

>>> [out.op for out, inputs, backward in tape.records]
['mul', 'sum']
"""

import threading

import numpy as np

from netcl_lite.core.tensor import FLOAT, Tensor
from netcl_lite.core.tensor_ops import add_tensors
from netcl_lite.core.validate import check_tensors, same_queue

# Each thread has its own stack of open tapes; ops record on the innermost one
# of the thread that runs them.
__all__ = ["Node", "Tape", "as_node", "is_recording", "nodes", "record", "tensor"]

_local = threading.local()


def _tapes():
    """This thread's stack of open tapes."""
    stack = getattr(_local, "tapes", None)
    if stack is None:
        stack = _local.tapes = []
    return stack


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
        self.op = None  # the op that computed this node ("matmul", ...)

    @property
    def shape(self):
        return self.value.shape

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def device(self):
        return self.value.device

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
    out = [x if type(x) is Node else as_node(x) for x in xs]
    check_tensors([node.value for node in out], dtype, op)
    return out


def is_recording():
    """True while this thread has an open ``Tape``: ops called now will be
    recorded."""
    return bool(_tapes())


def record(value, inputs, backward, op=None):
    """Wrap an op's output in a node named after ``op`` and, if a tape is
    open, remember how to send its gradient back to ``inputs``."""
    needs_grad = False
    for node in inputs:                # (a loop: ``any`` costs more here)
        if node.requires_grad:
            needs_grad = True
            break
    out = Node(value, requires_grad=needs_grad)
    out.op = op
    if needs_grad:
        tapes = _tapes()
        if tapes:
            tapes[-1].records.append((out, tuple(inputs), backward))
    return out


def _check_grad(grad, loss):
    """An explicit seed gradient: a float32 Tensor (or node) like ``loss``."""
    if isinstance(grad, Node):
        grad = grad.value
    if not isinstance(grad, Tensor):
        raise ValueError(
            f"grad must be a netcl_lite Tensor, got {type(grad).__name__}"
        )
    if grad.shape != loss.shape:
        raise ValueError(f"grad shape {grad.shape} != loss shape {loss.shape}")
    if grad.dtype != np.float32:
        raise ValueError(f"grad has dtype {grad.dtype}, need float32")
    # the loss's queue, not only its context: core/validate.py says why
    same_queue(grad, loss.value.queue, "backward", "grad", "the loss")
    return grad


class Tape:
    """Records ops in execution order; ``backward`` replays them reversed."""

    def __init__(self):
        self.records = []  # [(output node, input nodes, backward fn)]

    def __enter__(self):
        _tapes().append(self)
        return self

    def __exit__(self, *exc):
        _tapes().remove(self)
        return False

    def backward(self, loss, grad=None, hook=None):
        """Send d loss / d node to every node that requires a gradient.

        ``loss`` must be a scalar (one element) unless ``grad`` is given.
        Leaf gradients accumulate across calls, as in PyTorch.
        ``hook``, for tools that watch the backward (chapter 07 groups its
        kernels by record): ``hook(i)`` is called just before record i's
        backward runs, ``hook(None)`` just before its gradients are added
        into the inputs.
        """
        loss = as_node(loss)
        if grad is None:
            if loss.value.size != 1:
                raise ValueError(
                    f"backward needs a scalar loss or an explicit grad; "
                    f"loss has shape {loss.shape}"
                )
            grad = Tensor.from_host(loss.device, np.ones(loss.shape, np.float32))
        else:
            grad = _check_grad(grad, loss)
        for out, _, _ in self.records:  # intermediate grads start afresh
            out.grad = None
        loss.grad = grad
        for i in reversed(range(len(self.records))):
            out, inputs, backward = self.records[i]
            if out.grad is None:
                continue  # this op does not reach the loss
            if hook is not None:
                hook(i)
            grads = backward(out.grad)
            if hook is not None:
                hook(None)
            for node, g in zip(inputs, grads):
                if g is None or not node.requires_grad:
                    continue
                node.grad = g if node.grad is None else add_tensors(node.grad, g)
