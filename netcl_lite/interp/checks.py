"""Checks shared by the interpretability tools: a layer, a head or a
position that the model does not have is a ValueError naming it, raised
before any kernel runs.

>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn import DecoderConfig, DecoderLM
>>> model = DecoderLM(manager.default("cpu").queue, DecoderConfig(
...     vocab_size=20, dim=16, n_layers=2, n_heads=2, n_kv_heads=2))
>>> check_head(model, (1, 0), "heads")
(1, 0)
>>> check_head(model, (2, 0), "heads")
Traceback (most recent call last):
...
ValueError: heads: layer 2 in (2, 0) is not a layer of this model (0..1)
>>> position_mask([3, 5], 2, 6, "positions")[0]
array([False, False, False,  True, False,  True])
>>> position_mask(range(4, 8), 2, 6, "positions")
Traceback (most recent call last):
...
ValueError: positions: 6 is outside 0..5 (S = 6)
"""

import numpy as np


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def check_layer(model, layer, what):
    """``layer`` as an int, checked against the model's blocks."""
    n = len(model.blocks)
    if not _is_int(layer) or not 0 <= layer < n:
        raise ValueError(f"{what}: layer {layer!r} is not a layer of this model "
                         f"(0..{n - 1})")
    return int(layer)


def check_head(model, head, what):
    """``(layer, h)`` as a pair of ints, checked against the model."""
    if not isinstance(head, (tuple, list)) or len(head) != 2:
        raise ValueError(f"{what}: a head is a pair (layer, h), got {head!r}")
    layer, h = head
    n = len(model.blocks)
    if not _is_int(layer) or not 0 <= layer < n:
        raise ValueError(f"{what}: layer {layer!r} in {tuple(head)!r} is not a "
                         f"layer of this model (0..{n - 1})")
    H = model.blocks[layer].attn.n_heads
    if not _is_int(h) or not 0 <= h < H:
        raise ValueError(f"{what}: head {h!r} in {tuple(head)!r} is not a head "
                         f"of layer {layer} (0..{H - 1})")
    return int(layer), int(h)


def check_positions(positions, max_len, what):
    """``positions`` checked without knowing S yet: None, an int, a range
    or a list of ints (each in 0..max_len - 1), or a boolean array of
    shape (S,) or (B, S)."""
    if positions is None:
        return None
    if isinstance(positions, np.ndarray) and positions.dtype == bool:
        if positions.ndim not in (1, 2):
            raise ValueError(f"{what}: a boolean mask must be (S,) or (B, S), "
                             f"got shape {positions.shape}")
        return positions
    items = [positions] if _is_int(positions) else positions
    try:
        if isinstance(items, (str, bytes)):
            raise TypeError
        items = list(items)
    except TypeError:
        raise ValueError(f"{what}: expected None, an int, a range, a list of "
                         f"ints or a boolean mask, got {positions!r}") from None
    for p in items:
        if not _is_int(p) or not 0 <= p < max_len:
            raise ValueError(f"{what}: position {p!r} is outside 0..{max_len - 1}")
    return [int(p) for p in items]


def position_mask(positions, B, S, what):
    """The (B, S) boolean mask of the positions chosen (None: all)."""
    if positions is None:
        return np.ones((B, S), dtype=bool)
    if isinstance(positions, np.ndarray) and positions.dtype == bool:
        if positions.shape not in ((S,), (B, S)):
            raise ValueError(f"{what}: a mask of shape {positions.shape} does "
                             f"not fit (B, S) = ({B}, {S})")
        return np.broadcast_to(positions, (B, S)).copy()
    mask = np.zeros((B, S), dtype=bool)
    for p in [positions] if _is_int(positions) else positions:
        if not 0 <= p < S:
            raise ValueError(f"{what}: {p} is outside 0..{S - 1} (S = {S})")
        mask[:, p] = True
    return mask
