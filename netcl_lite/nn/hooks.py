"""Named activations of a ``DecoderLM``: read them, replace them, or take
the gradient of a metric with respect to them (chapter 10).

The names, for block l (B rows of S positions, width D, H query heads of
hd values, vocabulary V); the shape is the array you get or give:

    blocks.{l}.resid_pre     (B, S, D)      the residual stream entering
                                            block l (block 0: the embeddings)
    blocks.{l}.attn.pattern  (B, H, S, S)   each head's attention weights,
                                            a row per query, a column per key
    blocks.{l}.attn.z        (B, S, H, hd)  each head's output A v, before
                                            W_O (and before any head_mask)
    blocks.{l}.attn_out      (B, S, D)      the attention's output, after W_O
    blocks.{l}.mlp_out       (B, S, D)      the MLP's output; a model built
                                            with attn_only has no such name
    blocks.{l}.resid_post    (B, S, D)      the stream leaving block l
    ln_final.input           (B, S, D)      the final RMSNorm's input (the
                                            last block's resid_post)
    ln_final.scale           (B, S, 1)      its 1 / sqrt(mean(x^2) + eps)

The final norm's output is ``ln_final.input * ln_final.scale * weight``:
with the scale held fixed the logits are a linear map of the residual
stream, which is what direct logit attribution (``netcl_lite.interp``)
decomposes. ``model.hook_names()`` lists the names of one model.

Three calls use them (``DecoderLM`` has each as a method):

- ``run_with_cache(model, ids, names=None, hooks=None)`` -> (logits, cache):
  the logits (B, S, V) and {name: array} for the names asked (all: None);
- ``run_with_hooks(model, ids, hooks)`` -> logits: ``hooks`` maps a name to
  a function that takes the activation (a numpy array) and returns the
  array to use instead, of the same shape (patching, ablation);
- ``activation_grads(model, ids, metric, names)`` -> {name: array}:
  d metric / d activation, where ``metric`` maps the logits node to a
  scalar node (attribution patching). The model's weights get no gradient.

How the model exposes them: its forward passes each activation through
``point(module, name, node)``, the attention its weights through
``pattern(attn, q, k, v)`` and the final norm through ``final_norm``.
Outside the three calls each returns at once: no kernel, no copy to the
host. Inside one, they read the plan of the call (a ``Plan``, one per
thread, like autograd's tape). The fused attention kernel never stores A,
so reading a pattern recomputes it from q and k (``F.attention_weights``),
and replacing one, or asking its gradient, attends through it: A v.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn import DecoderConfig, DecoderLM
>>> queue = manager.default("cpu").queue
>>> model = DecoderLM(queue, DecoderConfig(vocab_size=20, dim=16, n_layers=2,
...     n_heads=2, n_kv_heads=1, max_seq_len=8, attn_only=True))
>>> ids = np.array([[1, 2, 3, 1, 2]], np.int32)
>>> logits, cache = model.run_with_cache(ids, ["blocks.1.attn.z",
...                                             "blocks.1.attn.pattern"])
>>> logits.shape, cache["blocks.1.attn.z"].shape       # (B, S, H, hd)
((1, 5, 20), (1, 5, 2, 8))
>>> bool(np.allclose(cache["blocks.1.attn.pattern"].sum(-1), 1, atol=1e-5))
True

Replacing head 0's output of layer 1 with zeros is the head mask's zero
ablation:

>>> def zero_head_0(z):
...     z[:, :, 0] = 0.0
...     return z
>>> hooked = model.run_with_hooks(ids, {"blocks.1.attn.z": zero_head_0})
>>> masked = model(ids, head_mask={1: [0.0, 1.0]}).value.to_host()
>>> bool(np.allclose(hooked, masked, atol=1e-5))
True
>>> model.run_with_hooks(ids, {"blocks.1.mlp_out": zero_head_0})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: hooks: unknown activation name 'blocks.1.mlp_out'; this model's ...

The message goes on to list the model's names:
blocks.{0..1}.{resid_pre, attn.pattern, attn.z, attn_out, resid_post},
ln_final.input, ln_final.scale.
"""

import threading

import numpy as np

import netcl_lite.autograd as ag
import netcl_lite.functional as F
from netcl_lite.autograd import Node, as_node
from netcl_lite.core.tensor import Tensor

# the names inside block l, in the order the forward meets them
BLOCK_NAMES = ("resid_pre", "attn.pattern", "attn.z", "attn_out", "mlp_out",
               "resid_post")
FINAL_NAMES = ("ln_final.input", "ln_final.scale")

_local = threading.local()   # this thread's plan, while one of the calls runs


def activation_names(model):
    """Every activation name of ``model``, in the order its forward meets
    them (``mlp_out`` only in blocks that have an MLP)."""
    out = []
    for i, block in enumerate(model.blocks):
        for name in BLOCK_NAMES:
            if name == "mlp_out" and getattr(block, "ffn", None) is None:
                continue
            out.append(f"blocks.{i}.{name}")
    return out + list(FINAL_NAMES)


def describe(model):
    """The names of ``model`` in one line, for error messages."""
    inside = [n.split(".", 2)[2] for n in activation_names(model)
              if n.startswith("blocks.0.")]
    last = len(model.blocks) - 1
    return (f"blocks.{{0..{last}}}.{{{', '.join(inside)}}}, "
            + ", ".join(FINAL_NAMES))


def check_names(model, wanted, what):
    """``wanted`` (an iterable of names) as a list, each one checked: an
    unknown name or a non-string is a ValueError naming it."""
    if isinstance(wanted, str):
        raise ValueError(f"{what}: expected a list of names, got the string "
                         f"{wanted!r} (write [{wanted!r}])")
    known = set(activation_names(model))
    out = []
    for name in wanted:
        if not isinstance(name, str) or name not in known:
            raise ValueError(f"{what}: unknown activation name {name!r}; this "
                             f"model's names are {describe(model)}")
        out.append(name)
    return out


class Plan:
    """What one call wants at the named points: ``read`` (names to copy to
    the host), ``hooks`` (name -> replacing function) and ``grads`` (names
    whose gradient to take). ``where`` maps each module of the model to
    the prefix of its names."""

    def __init__(self, model, read=(), hooks=None, grads=()):
        self.where = {id(model): ""}
        for i, block in enumerate(model.blocks):
            self.where[id(block)] = f"blocks.{i}."
            self.where[id(block.attn)] = f"blocks.{i}.attn."
        self.read = set(check_names(model, read, "names"))
        hooks = {} if hooks is None else hooks
        if not isinstance(hooks, dict):
            raise ValueError(f"hooks: expected a dict {{name: function}}, got "
                             f"{type(hooks).__name__}")
        check_names(model, hooks, "hooks")
        for name, fn in hooks.items():
            if not callable(fn):
                raise ValueError(f"hooks: the hook of {name!r} is not a "
                                 f"function: {fn!r}")
        self.hooks = dict(hooks)
        self.grads = set(check_names(model, grads, "names"))
        self.cache = {}          # name -> host array
        self.leaves = {}         # name -> the zero leaf added to it (grads)

    def wants(self, name):
        return name in self.read or name in self.hooks or name in self.grads

    def name_of(self, module, name):
        prefix = self.where.get(id(module))
        return None if prefix is None else prefix + name

    def visit(self, name, node):
        """Replace, then take the gradient of, then read the activation."""
        if name in self.hooks:
            node = self.replace(name, node)
        if name in self.grads:           # d metric / d node = d metric / d leaf
            leaf = ag.tensor(Tensor.zeros(node.queue, node.shape))
            self.leaves[name] = leaf
            node = F.add(node, leaf)
        if name in self.read:
            self.cache[name] = node.value.to_host()
        return node

    def replace(self, name, node):
        """The hook's array in place of the activation (a constant: nothing
        upstream of a replaced activation gets its gradient)."""
        old = node.value.to_host()
        new = self.hooks[name](old.copy())
        try:
            new = None if new is None else np.asarray(new, dtype=np.float64)
        except (TypeError, ValueError):
            new = None
        if new is None or new.shape != old.shape:
            got = "no array" if new is None else f"shape {new.shape}"
            raise ValueError(f"hooks: the hook of {name!r} returned {got}; the "
                             f"activation has shape {old.shape}")
        if not np.isfinite(new).all():
            raise ValueError(f"hooks: the hook of {name!r} returned a value "
                             f"that is not finite")
        return as_node(Tensor.from_host(node.queue, new.astype(np.float32)))


def current():
    """This thread's plan, or None outside the three calls."""
    return getattr(_local, "plan", None)


class planned:
    """``with planned(plan):`` the named points of this thread follow it."""

    def __init__(self, plan):
        self.plan = plan

    def __enter__(self):
        if current() is not None:
            raise ValueError("run_with_cache, run_with_hooks and "
                             "activation_grads cannot run inside each other")
        _local.plan = self.plan
        return self.plan

    def __exit__(self, *exc):
        _local.plan = None
        return False


# --- the points the model calls --------------------------------------------

def point(module, name, node):
    """``node`` as the plan wants it at ``module``'s activation ``name``;
    outside a call, ``node`` itself."""
    plan = current()
    if plan is None:
        return node
    full = plan.name_of(module, name)
    if full is None or not plan.wants(full):
        return node
    return plan.visit(full, node)


def pattern(attn, q, k, v):
    """The attention output (B, H, S, hd) through the named weights A when
    the plan replaces them or wants their gradient; None when the fused
    kernel may run (after copying A to the host if the plan reads it).
    q is (B, H, S, hd), k and v (B, HKV, S, hd), rotated."""
    plan = current()
    full = None if plan is None else plan.name_of(attn, "pattern")
    if full is None or not plan.wants(full):
        return None
    rep = attn.n_heads // attn.n_kv_heads              # GQA: H // HKV
    A = F.attention_weights(q, F.repeat_kv(k, rep), causal=attn.causal,
                            scale=attn.scale, window=attn.window)  # (B, H, S, S)
    A = plan.visit(full, A)
    if full not in plan.hooks and full not in plan.grads:
        return None                                    # read only
    return F.matmul(A, F.repeat_kv(v, rep))            # (B, H, S, hd)


def final_norm(model, x):
    """``model.norm(x)`` with the points ``ln_final.input`` and
    ``ln_final.scale`` (its 1 / rms per position, computed on the host in
    float64 when the plan wants it; the norm's kernel keeps its own)."""
    x = point(model, "ln_final.input", x)
    plan = current()
    name = "ln_final.scale"
    if plan is None or plan.name_of(model, name) is None or not plan.wants(name):
        return model.norm(x)
    host = x.value.to_host().astype(np.float64)                   # (B, S, D)
    weight = model.norm.weight.value.to_host().astype(np.float64)  # (D,)
    scale = 1.0 / np.sqrt(np.mean(host * host, -1, keepdims=True)
                          + model.norm.eps)                       # (B, S, 1)
    if name in plan.hooks:   # x * (the hook's scale) * weight
        scale = plan.replace(name, as_node(Tensor.from_host(x.queue, scale)))
        scale = scale.value.to_host().astype(np.float64)          # (B, S, 1)
        y = F.mul(x, Tensor.from_host(x.queue, scale * weight))   # (B, S, D)
    else:
        y = model.norm(x)                                         # (B, S, D)
    if name in plan.read:
        plan.cache[name] = scale.astype(np.float32)
    if name in plan.grads:   # d m / d scale = sum over D of (d m / d y) x weight
        leaf = ag.tensor(Tensor.zeros(y.queue, y.shape))
        plan.leaves[name] = leaf
        plan.norm_input = host * weight                           # (B, S, D)
        y = F.add(y, leaf)
    return y


# --- the three calls --------------------------------------------------------

def run_with_cache(model, ids, names=None, hooks=None):
    """(logits (B, S, V), {name: array}) for the names asked (None: all).
    With ``hooks``, the cache holds what the model used (after them)."""
    wanted = activation_names(model) if names is None else \
        check_names(model, names, "names")
    plan = Plan(model, wanted, hooks)
    with planned(plan):
        logits = model.forward(ids).value.to_host()                 # (B, S, V)
    return logits, {name: plan.cache[name] for name in wanted}


def run_with_hooks(model, ids, hooks):
    """The logits (B, S, V) with the hooked activations replaced."""
    plan = Plan(model, (), hooks)
    with planned(plan):
        return model.forward(ids).value.to_host()


def activation_grads(model, ids, metric, names):
    """{name: d metric / d activation}, from one forward and one backward.

    ``metric(logits)`` takes the logits node (B, S, V) and returns a node
    of one value. The model's parameters are left out of the tape while
    it runs, so their ``.grad`` stays as it was."""
    wanted = check_names(model, names, "names")
    if not wanted:
        raise ValueError("activation_grads: no names given")
    if not callable(metric):
        raise ValueError(f"activation_grads: metric must be a function of the "
                         f"logits node, got {metric!r}")
    plan = Plan(model, (), None, wanted)
    params = [p for p in model.parameters() if p.requires_grad]
    for p in params:                  # only the activations' paths are taped
        p.requires_grad = False
    try:
        with planned(plan), ag.Tape() as tape:
            value = metric(model.forward(ids))
        if not isinstance(value, Node) or value.value.size != 1:
            shape = getattr(value, "shape", type(value).__name__)
            raise ValueError(f"activation_grads: metric must return a node of "
                             f"one value, got {shape}")
        tape.backward(value)     # (the backward reads requires_grad too)
    finally:
        for p in params:
            p.requires_grad = True
    out = {}
    for name in wanted:
        g = _grad(plan.leaves[name])
        if name == "ln_final.scale":           # g is d metric / d norm output
            g = (g * plan.norm_input).sum(-1, keepdims=True)          # (B, S, 1)
        out[name] = g.astype(np.float32)
    return out


def _grad(leaf):
    """A leaf's gradient on the host; zeros when the metric does not reach it."""
    if leaf.grad is None:
        return np.zeros(leaf.shape, np.float64)
    return leaf.grad.to_host().astype(np.float64)

