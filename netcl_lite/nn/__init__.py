"""Modules: parameter containers built from ``netcl_lite.functional`` ops."""

from netcl_lite.nn.attention import MultiHeadAttention
from netcl_lite.nn.block import DecoderBlock
from netcl_lite.nn.checkpoint import load_checkpoint, load_weights, save_checkpoint
from netcl_lite.nn.decode import FusedDecoder
from netcl_lite.nn.embedding import Embedding
from netcl_lite.nn.feed_forward import SwiGLU
from netcl_lite.nn.hooks import activation_names
from netcl_lite.nn.hub import pretrained
from netcl_lite.nn.kv_cache import KVCache
from netcl_lite.nn.linear import Linear
from netcl_lite.nn.model import DecoderConfig, DecoderLM
from netcl_lite.nn.module import Module, parameter
from netcl_lite.nn.norm import RMSNorm
from netcl_lite.nn.quantized import QuantizedEmbedding, QuantizedLinear
from netcl_lite.nn.transformer import RotaryAttention

__all__ = [
    "Module", "parameter", "Linear", "Embedding", "MultiHeadAttention",
    "RotaryAttention",
    # the decoder (chapter 09)
    "RMSNorm", "SwiGLU", "DecoderBlock", "DecoderConfig", "DecoderLM", "KVCache",
    "FusedDecoder",
    "save_checkpoint", "load_checkpoint", "load_weights",
    # named activations: read, replace, differentiate (chapter 10)
    "activation_names",
    # a real model and its tokenizer, from one file (chapter 14)
    "pretrained",
    # weights kept quantised on the device (chapter 14)
    "QuantizedLinear", "QuantizedEmbedding",
]
