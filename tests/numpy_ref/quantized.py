"""GGUF's block formats decoded in numpy, written from the format's
description (llama.cpp's ggml-common.h), not from the gguf package: the
tests check it against ``gguf.quants.dequantize`` and the kernels against it.

A (rows, cols) matrix is stored row by row, each row as cols / 32 blocks:

    Q4_0  18 bytes: float16 d, 16 bytes of 4-bit codes   w = d * (q - 8)
    Q4_1  20 bytes: float16 d, float16 m, 16 bytes       w = d * q + m
    Q8_0  34 bytes: float16 d, 32 int8 codes             w = d * q
    F16   the float16 values themselves

Byte j of a 4-bit block holds weight j (low nibble) and weight j + 16 (high
nibble). Arithmetic is float32 with one rounding per operation, as gguf's
numpy code and the kernels do it, so all three agree bit for bit.
"""

import numpy as np

BLOCK_BYTES = {"Q4_0": 18, "Q4_1": 20, "Q8_0": 34, "F16": 64}


def _half(byte_pairs):
    """(..., 2) little-endian bytes -> float32 of the float16 they hold."""
    return np.ascontiguousarray(byte_pairs).view("<f2")[..., 0].astype(np.float32)


def _nibbles(codes):
    """(n, 16) bytes -> (n, 32) codes: the low nibbles, then the high ones."""
    return np.concatenate([codes & 0x0F, codes >> 4], axis=1)


def dequantize(raw, qtype, rows, cols):
    """The weights (rows, cols) float32 of a GGUF tensor's bytes."""
    raw = np.asarray(raw).reshape(-1).view(np.uint8)
    if qtype == "F16":
        return raw.view("<f2").astype(np.float32).reshape(rows, cols)
    blocks = raw.reshape(rows * cols // 32, BLOCK_BYTES[qtype])   # (n, bytes)
    d = _half(blocks[:, 0:2])[:, None]                            # (n, 1)
    if qtype == "Q8_0":
        q = blocks[:, 2:].view(np.int8).astype(np.float32)        # (n, 32)
        w = d * q
    elif qtype == "Q4_0":
        q = _nibbles(blocks[:, 2:]).astype(np.float32) - np.float32(8)
        w = d * q
    elif qtype == "Q4_1":
        m = _half(blocks[:, 2:4])[:, None]
        q = _nibbles(blocks[:, 4:]).astype(np.float32)
        w = d * q + m          # float32: the product rounded, then the sum
    else:
        raise ValueError(f"no reference for {qtype!r}")
    return w.reshape(rows, cols)


def quantized_matmul(x, W):
    """y = x W^T in float64, W already dequantised (rows, cols)."""
    return np.asarray(x, np.float64) @ np.asarray(W, np.float64).T


def quantized_matmul_vjp(x, W, g):
    """dx = g W (the weight gets no gradient)."""
    return [np.asarray(g, np.float64) @ np.asarray(W, np.float64)]
