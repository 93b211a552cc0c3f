"""The differentiable ops. Each takes and returns autograd nodes, runs a
forward kernel from ``kernels/`` and records a backward that runs its
backward kernel.

>>> import netcl_lite.functional as F
"""

from netcl_lite.functional.attention import (
    attention_naive,
    attention_weights,
    scaled_dot_product_attention,
    scores,
)
from netcl_lite.functional.concat import concat
from netcl_lite.functional.cross_entropy import cross_entropy
from netcl_lite.functional.elementwise import add, mul, scale
from netcl_lite.functional.embedding import embedding
from netcl_lite.functional.flash_attention import flash_attention
from netcl_lite.functional.flash_attention_simple import flash_attention_simple
from netcl_lite.functional.linear import linear
from netcl_lite.functional.matmul import (matmul, matmul_register_tile,
                                          matmul_simple)
from netcl_lite.functional.quantized import quantized_matmul
from netcl_lite.functional.quantized_embedding import quantized_embedding
from netcl_lite.functional.reduce import sum
from netcl_lite.functional.repeat_kv import repeat_kv
from netcl_lite.functional.rms_norm import rms_norm
from netcl_lite.functional.rope import rope
from netcl_lite.functional.shape import permute, reshape, transpose
from netcl_lite.functional.silu import silu
from netcl_lite.functional.softmax import softmax
from netcl_lite.functional.swiglu import swiglu

__all__ = [
    # elementwise, reductions, products
    "add", "mul", "scale", "sum", "matmul", "matmul_simple",
    "matmul_register_tile", "linear",
    # shapes
    "reshape", "permute", "transpose", "concat",
    # attention
    "scores", "softmax", "attention_weights", "scaled_dot_product_attention",
    "attention_naive", "flash_attention", "flash_attention_simple",
    "rope", "repeat_kv",
    # layers and losses
    "embedding", "rms_norm", "silu", "swiglu", "cross_entropy",
    # quantised weights (chapter 14)
    "quantized_matmul", "quantized_embedding",
]
