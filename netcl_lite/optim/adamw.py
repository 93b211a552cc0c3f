"""``AdamW``: Adam with decoupled weight decay (``kernels/adamw.cl``;
chapter 09).

Adam keeps two running means per value, m of the gradient and v of its
square, and steps by m / sqrt(v): every parameter moves at about ``lr`` per
step whatever the scale of its gradient. AdamW shrinks the weights
separately, p <- p (1 - lr wd), instead of adding wd p to the gradient
(which Adam's division would undo).

>>> import numpy as np
>>> import netcl_lite.autograd as ag
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> w = ag.tensor(Tensor.from_host(queue, [1.0, -2.0]))
>>> opt = AdamW([w], lr=0.1, weight_decay=0.0)
>>> with ag.Tape() as tape:
...     loss = F.sum(F.mul(w, w))
>>> tape.backward(loss)
>>> opt.step()                  # the first step moves each value by lr
>>> np.round(w.value.to_host(), 4)
array([ 0.9, -1.9], dtype=float32)

Parameters may come in groups with their own weight decay, as in PyTorch:
``AdamW([{"params": weights, "weight_decay": 0.1},
{"params": gains, "weight_decay": 0.0}], lr=3e-3)``.
"""

import math

import numpy as np

from netcl_lite.autograd import Node
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.tensor_ops import work_items
from netcl_lite.core.validate import check_number
from netcl_lite.core.work import FLOAT, counts

INLINE_SQRT = ("-DINLINE_SQRT",)


def _build_options(device):
    """("-DINLINE_SQRT",) on PoCL, whose builtin sqrt is a slow function call
    (kernels/adamw.cl says why), () on other implementations (the Device
    knows which it is: core/device.py)."""
    return INLINE_SQRT if device.implementation == "pocl" else ()


class AdamW:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01):
        self.lr = check_number(lr, "AdamW", "lr", 0.0)
        if len(betas) != 2:
            raise ValueError(f"AdamW: betas must be a pair, got {betas!r}")
        self.betas = (check_number(betas[0], "AdamW", "beta1", 0.0, 1.0),
                      check_number(betas[1], "AdamW", "beta2", 0.0, 1.0))
        self.eps = check_number(eps, "AdamW", "eps", 0.0, low_open=True)
        params = list(params)
        if params and isinstance(params[0], dict):
            groups = params
        else:
            groups = [{"params": params}]
        self.groups, seen = [], set()
        for i, group in enumerate(groups):
            wd = check_number(group.get("weight_decay", weight_decay),
                              "AdamW", f"weight_decay of group {i}", 0.0)
            ps = list(group["params"])
            for p in ps:
                if not isinstance(p, Node) or not p.requires_grad \
                        or p.dtype != np.float32:
                    raise ValueError(
                        f"AdamW: parameters must be float32 nodes that require "
                        f"a gradient, got {p!r}"
                    )
                if p in seen:     # nodes compare by identity
                    raise ValueError(f"AdamW: parameter {p!r} appears twice")
                seen.add(p)
            self.groups.append({"params": ps, "weight_decay": wd})
        if not seen:
            raise ValueError("AdamW: got no parameters")
        self.t = 0          # steps taken
        self.state = {}     # param node -> (m, v) Tensors, made on first step

    def parameters(self):
        return [p for group in self.groups for p in group["params"]]

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def step(self):
        """One update of every parameter that has a gradient."""
        params = [p for p in self.parameters() if p.grad is not None]
        for p in params:  # all checks before the first kernel
            if p.grad.shape != p.shape:
                raise ValueError(
                    f"AdamW: gradient {p.grad.shape} does not match parameter "
                    f"{p!r}"
                )
        self.t += 1
        b1, b2 = self.betas
        c1 = 1.0 - b1 ** self.t                  # bias corrections, float64
        sqrt_c2 = math.sqrt(1.0 - b2 ** self.t)
        for group in self.groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p not in self.state:
                    self.state[p] = (Tensor.zeros(p.device, p.shape),
                                     Tensor.zeros(p.device, p.shape))
                m, v = self.state[p]
                n = p.value.size
                launch(p.device, "adamw", "adamw_step",
                       (work_items(p.device, n),), LOCAL_1D,
                       p.value, p.grad, m, v, n, self.lr, b1, b2, self.eps,
                       group["weight_decay"], c1, sqrt_c2,
                       options=_build_options(p.device))


@counts("adamw_step")
def _step_work(a):
    # 14 FLOPs per value (adamw.cl); reads p, g, m, v; writes p, m, v
    return 14 * a["n"], 7 * FLOAT * a["n"]
