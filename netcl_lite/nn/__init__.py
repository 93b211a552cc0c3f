"""Modules: parameter containers built from ``netcl_lite.functional`` ops."""

from netcl_lite.nn.attention import MultiHeadAttention
from netcl_lite.nn.embedding import Embedding
from netcl_lite.nn.linear import Linear
from netcl_lite.nn.module import Module
from netcl_lite.nn.transformer import RotaryAttention

__all__ = ["Module", "Linear", "Embedding", "MultiHeadAttention", "RotaryAttention"]
