"""``export_onnx(model, path)``: a ``DecoderLM`` written as an ONNX graph
(chapter 09; ``DecoderLM.export_onnx(path)`` calls it).

ONNX describes a computation as a graph of standard operators (MatMul,
Softmax, Gather, ...) with the weights stored beside them, so that another
runtime can run the model without this library: onnxruntime on a CPU, or
onnxruntime-web in the static course, where chapter 09's trained model reads
the reader's own sentence. The graph is the forward pass written a second
time, operator by operator, from the same formulas:

    ids (B, S) -> Gather(tok_emb.weight)                          (B, S, D)
      n_layers x:
        h = x + W_O(attention(RoPE(q), RoPE(k), v))  on RMSNorm(x)
        x = h + SwiGLU(RMSNorm(h))
    -> RMSNorm -> MatMul(head.weight)                             (B, S, V)
       (a tied head: MatMul by tok_emb.weight, transposed)

- RMSNorm is ``x / sqrt(mean(x^2) + eps) * g``, five elementwise operators;
- RoPE turns the interleaved pairs (x[2i], x[2i+1]) by
  ``rope_scale * m * theta_i``. The cos and sin of every position
  0..max_seq_len-1 are computed here in float64 (as ``kernels/rope.cl``
  does) and stored; the graph slices the first S rows. The turn is
  ``x * cos + (x @ P) * sin``, where the constant P maps each pair
  (x0, x1) to (-x1, x0);
- GQA: each kv head is repeated for the H // HKV query heads that read it
  (Unsqueeze, Expand, Reshape), as ``F.repeat_kv`` does;
- the scores are ``q k^T * attn_scale`` (1/sqrt(d_k) when attn_scale is 0),
  and the causal mask sets key j > query i to -inf before the Softmax;
- SwiGLU is ``(silu(x W_gate) * x W_up) W_down`` with silu(z) = z sigmoid(z).

The graph has one input and two outputs:

    ids        int32 (B, S), 1 <= S <= max_seq_len
    logits     float32 (B, S, V)
    attention  float32 (n_layers, B, H, S, S): every head's weights A

The initializers are named as in ``model.named_parameters()``, and the
model's ``DecoderConfig`` is stored as JSON in the metadata, under
``netcl_lite.config``. Importing this module does not import ``onnx``: the
export does, and says how to install it when it is missing.

>>> import numpy as np, onnx, os, tempfile
>>> from onnx.reference import ReferenceEvaluator
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn import DecoderConfig, DecoderLM
>>> queue = manager.default("cpu").queue
>>> cfg = DecoderConfig(vocab_size=50, dim=16, n_layers=2, n_heads=4,
...                     n_kv_heads=2, max_seq_len=8, rope_scale=0.5, seed=0)
>>> model = DecoderLM(queue, cfg)
>>> path = os.path.join(tempfile.mkdtemp(), "tiny.onnx")
>>> graph = model.export_onnx(path)          # the onnx.ModelProto it wrote
>>> onnx.checker.check_model(graph)
>>> [i.name for i in graph.graph.input], [o.name for o in graph.graph.output]
(['ids'], ['logits', 'attention'])
>>> ids = np.array([[3, 1, 4, 1, 5]], np.int32)               # (B, S)
>>> logits, A = ReferenceEvaluator(path).run(None, {"ids": ids})
>>> logits.shape, A.shape                  # (B, S, V), (L, B, H, S, S)
((1, 5, 50), (2, 1, 4, 5, 5))
>>> ours = model(ids).value.to_host()
>>> bool(np.abs(logits - ours).max() < 1e-4 * np.abs(ours).max())
True
"""

import importlib.util
import json
import pathlib
import re

import numpy as np

from netcl_lite.nn.weights import quantised_layers

OPSET = 18        # ReduceMean takes its axes as an input from opset 18 on
IR_VERSION = 8    # the IR of opset 18 (ONNX 1.13): older readers accept it
INSTALL = "pip install 'onnx>=1.23'  (or the project's dev extra)"


def rope_tables(max_seq_len, head_dim, base, scale):
    """(cos, sin), each (max_seq_len, head_dim): position m, column 2i and
    2i + 1 hold cos and sin of scale * m * base ** (-2i / head_dim).

    >>> c, s = rope_tables(3, 2, 10000.0, 1.0)     # one pair: theta_0 = 1
    >>> np.round(s[:, 0], 4)                       # sin(0), sin(1), sin(2)
    array([0.    , 0.8415, 0.9093], dtype=float32)
    """
    pairs = head_dim // 2
    theta = base ** (-2.0 * np.arange(pairs) / head_dim)         # (pairs,)
    angle = scale * np.arange(max_seq_len)[:, None] * theta      # (T, pairs)
    both = np.repeat(angle, 2, axis=1)                           # (T, d)
    return np.cos(both).astype(np.float32), np.sin(both).astype(np.float32)


def pair_swap(head_dim):
    """P (d, d) with x @ P = (-x1, x0, -x3, x2, ...): the quarter turn of
    every pair, which RoPE scales by sin.

    >>> np.array([1.0, 2.0, 3.0, 4.0]) @ pair_swap(4)
    array([-2.,  1., -4.,  3.])
    """
    P = np.zeros((head_dim, head_dim), np.float32)
    P[1::2, 0::2] -= np.eye(head_dim // 2, dtype=np.float32)     # x1 -> -out0
    P[0::2, 1::2] += np.eye(head_dim // 2, dtype=np.float32)     # x0 -> out1
    return P


def attention_mask(max_seq_len, window=0):
    """(T, T) bool: True where query i may read key j (j <= i, and
    i - window < j when a window is set).

    >>> attention_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    """
    i = np.arange(max_seq_len)[:, None]
    j = np.arange(max_seq_len)[None, :]
    keep = j <= i
    if window:
        keep &= j > i - window
    return keep


class _Graph:
    """Collects ONNX nodes and initializers; each method returns the name of
    the value it made, so the forward reads as a chain of calls."""

    def __init__(self, helper, numpy_helper):
        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes, self.initializers, self.count = [], [], 0

    def const(self, array, name=None):
        if name is None:
            self.count += 1
            name = f"const_{self.count}"
        self.initializers.append(
            self.numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, kind, *inputs, **attrs):
        self.count += 1
        out = f"{kind.lower()}_{self.count}"
        self.nodes.append(self.helper.make_node(kind, list(inputs), [out],
                                                **attrs))
        return out

    def matmul(self, x, w):
        return self.op("MatMul", x, w)

    def rms_norm(self, x, weight, eps):
        ms = self.op("ReduceMean", self.op("Mul", x, x), self.const([-1]),
                     keepdims=1)                                 # (..., 1)
        rms = self.op("Sqrt", self.op("Add", ms, self.const(np.float32(eps))))
        return self.op("Mul", self.op("Div", x, rms), weight)    # (..., D)


def export_onnx(model, path):
    """Write ``model``'s forward pass to ``path`` as ONNX; return the
    ``onnx.ModelProto`` written."""
    if importlib.util.find_spec("onnx") is None:
        raise ImportError(f"export_onnx needs the onnx package: {INSTALL}")
    import onnx                                   # only when exporting
    from onnx import TensorProto, helper, numpy_helper

    c = getattr(model, "config", None)
    if c is None or not hasattr(model, "named_parameters"):
        raise ValueError(f"export_onnx needs a DecoderLM, got "
                         f"{type(model).__name__}")
    quantised = quantised_layers(model)
    if quantised:
        raise ValueError(f"export_onnx: {quantised[0]} is quantised; the "
                         f"graph stores float weights only")
    window = getattr(c, "window", None) or 0     # a sliding window, if any
    H, HKV = c.n_heads, c.n_kv_heads
    d_k, T = c.head_dim or c.dim // H, c.max_seq_len
    scale = c.attn_scale or 1.0 / np.sqrt(d_k)
    g = _Graph(helper, numpy_helper)
    w = {name: g.const(p.value.to_host().astype(np.float32), name)
         for name, p in model.named_parameters()}

    # S, read from the input, slices the position tables and the mask
    S = g.op("Shape", "ids", start=1, end=2)                     # [S]
    zero = g.const(np.array([0], np.int64))
    cos_t, sin_t = rope_tables(T, d_k, c.rope_base, c.rope_scale)
    cos = g.op("Slice", g.const(cos_t, "rope.cos"), zero, S, zero)   # (S, d_k)
    sin = g.op("Slice", g.const(sin_t, "rope.sin"), zero, S, zero)   # (S, d_k)
    swap = g.const(pair_swap(d_k), "rope.pair_swap")             # (d_k, d_k)
    SS = g.op("Concat", S, S, axis=0)                            # [S, S]
    keep = g.op("Slice", g.const(attention_mask(T, window), "attention.mask"),
                g.const(np.array([0, 0], np.int64)), SS)         # (S, S)
    minus_inf = g.const(np.float32(-np.inf))

    def heads(y, n):               # (B, S, n * d_k) -> (B, n, S, d_k)
        y = g.op("Reshape", y, g.const(np.array([0, 0, n, d_k], np.int64)))
        return g.op("Transpose", y, perm=[0, 2, 1, 3])

    def rope(y):                   # (B, n, S, d_k), turned pair by pair
        turned = g.op("Mul", g.matmul(y, swap), sin)
        return g.op("Add", g.op("Mul", y, cos), turned)

    def repeat_kv(y):              # (B, HKV, S, d_k) -> (B, H, S, d_k)
        if H == HKV:
            return y
        y = g.op("Unsqueeze", y, g.const(np.array([2], np.int64)))
        y = g.op("Expand", y, g.const(np.array([1, 1, H // HKV, 1, 1],
                                               np.int64)))  # (B, HKV, G, S, d)
        return g.op("Reshape", y, g.const(np.array([0, H, -1, d_k], np.int64)))

    x = g.op("Gather", w["tok_emb.weight"], "ids", axis=0)       # (B, S, D)
    maps = []
    for i in range(c.n_layers):
        p = f"blocks.{i}."
        n = g.rms_norm(x, w[p + "attn_norm.weight"], c.norm_eps)
        q = rope(heads(g.matmul(n, w[p + "attn.wq"]), H))        # (B, H, S, d)
        k = rope(heads(g.matmul(n, w[p + "attn.wk"]), HKV))      # (B, HKV, S, d)
        v = heads(g.matmul(n, w[p + "attn.wv"]), HKV)            # (B, HKV, S, d)
        k, v = repeat_kv(k), repeat_kv(v)                        # (B, H, S, d)
        kT = g.op("Transpose", k, perm=[0, 1, 3, 2])             # (B, H, d, S)
        scores = g.op("Mul", g.matmul(q, kT),
                      g.const(np.float32(scale)))                # (B, H, S, S)
        scores = g.op("Where", keep, scores, minus_inf)          # causal mask
        A = g.op("Softmax", scores, axis=-1)                     # (B, H, S, S)
        maps.append(g.op("Unsqueeze", A, zero))                  # (1, B, H, S, S)
        o = g.op("Transpose", g.matmul(A, v), perm=[0, 2, 1, 3])  # (B, S, H, d)
        o = g.op("Reshape", o, g.const(np.array([0, 0, H * d_k], np.int64)))
        h = g.op("Add", x, g.matmul(o, w[p + "attn.wo"]))        # (B, S, D)
        if c.attn_only:                                          # no MLP
            x = h
            continue
        n = g.rms_norm(h, w[p + "ffn_norm.weight"], c.norm_eps)
        gate = g.matmul(n, w[p + "ffn.w_gate"])                  # (B, S, hidden)
        silu = g.op("Mul", gate, g.op("Sigmoid", gate))
        up = g.op("Mul", silu, g.matmul(n, w[p + "ffn.w_up"]))
        x = g.op("Add", h, g.matmul(up, w[p + "ffn.w_down"]))    # (B, S, D)
    x = g.rms_norm(x, w["norm.weight"], c.norm_eps)
    if c.tie_head:                                               # x E^T
        head = g.op("Transpose", w["tok_emb.weight"], perm=[1, 0])  # (D, V)
    else:
        head = w["head.weight"]                                  # (D, V)
    g.nodes.append(helper.make_node("MatMul", [x, head], ["logits"]))
    g.nodes.append(helper.make_node("Concat", maps, ["attention"], axis=0))

    graph = helper.make_graph(
        g.nodes, "DecoderLM",
        [helper.make_tensor_value_info("ids", TensorProto.INT32, ["B", "S"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       ["B", "S", c.vocab_size]),
         helper.make_tensor_value_info("attention", TensorProto.FLOAT,
                                       [c.n_layers, "B", H, "S", "S"])],
        g.initializers)
    proto = helper.make_model(graph, producer_name="netcl_lite",
                              opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=IR_VERSION)
    helper.set_model_props(proto, {"netcl_lite.config":
                                   json.dumps(c.to_dict(), sort_keys=True)})
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, str(path))
    return proto


def skip_examples(doc):
    """Mark every example of a docstring ``+SKIP`` (for doctest).

    >>> skip_examples(">>> 1 + 1\\n2")
    '>>> 1 + 1  # doctest: +SKIP\\n2'
    """
    return re.sub(r"^(\s*>>> .*)$", r"\1  # doctest: +SKIP", doc, flags=re.M)


# tests/test_docstrings.py runs every docstring; the module's example needs
# onnx, an optional package (the dev extra has it), so without it, it is
# skipped rather than failed.
if importlib.util.find_spec("onnx") is None:
    __doc__ = skip_examples(__doc__)
