"""Reference answers for chapter 08's exercises."""

import math

import numpy as np


def exercise_1(S, heads, batch, bytes_per_value=4):
    """scores_bytes: one S x S matrix per head and per sequence."""
    return S * S * heads * batch * bytes_per_value


def exercise_2(m, l, acc, s_block, v_block):
    """online_update: rescale the old sums to the new max, add the block."""
    s_block = np.asarray(s_block, dtype=np.float64)            # (b,)
    v_block = np.asarray(v_block, dtype=np.float64)            # (b, dv)
    m_new = max(m, float(s_block.max()))
    alpha = math.exp(m - m_new)                                # 0 when m = -inf
    p = np.exp(s_block - m_new)                                # (b,)
    return m_new, alpha * l + p.sum(), alpha * np.asarray(acc) + p @ v_block


def exercise_3(S, block):
    """causal_tiles: query block i sees key blocks 0 .. i, so T (T + 1) / 2."""
    T = -(-S // block)
    return T * (T + 1) // 2
