"""The logit lens: read the residual stream after each block as if it
were the last one, through the model's final norm and head.

At depth l (0: the embeddings, l: after block l - 1, L: after the last
block) the stream x_l goes through ``model.norm`` (with its own scale,
computed from x_l) and ``model.head``: the same kernels as the real
forward, so depth L gives the model's logits exactly. How early the right
answer shows up says which blocks build it.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn import DecoderConfig, DecoderLM
>>> model = DecoderLM(manager.default("cpu").queue, DecoderConfig(
...     vocab_size=20, dim=16, n_layers=2, n_heads=2, n_kv_heads=2))
>>> ids = np.array([[1, 2, 3]], np.int32)
>>> lens = logit_lens(model, ids)
>>> lens.shape                                   # (L + 1, B, S, V)
(3, 1, 3, 20)
>>> bool(np.array_equal(lens[-1], model(ids).value.to_host()))
True
"""

import numpy as np

from netcl_lite.autograd import as_node
from netcl_lite.core.tensor import Tensor


def lens_names(model):
    """The streams read: each block's resid_pre, then ln_final.input."""
    return [f"blocks.{i}.resid_pre" for i in range(len(model.blocks))] + \
        ["ln_final.input"]


def logit_lens(model, ids):
    """(L + 1, B, S, V) logits, one set per depth."""
    _, cache = model.run_with_cache(ids, lens_names(model))
    out = []
    for name in lens_names(model):
        x = as_node(Tensor.from_host(model.queue, cache[name]))  # (B, S, D)
        out.append(model.head(model.norm(x)).value.to_host())    # (B, S, V)
    return np.stack(out)
