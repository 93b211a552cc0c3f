"""Batched matrix product (``kernels/matmul.cl``).

``matmul(a, b)``: a is (..., M, K); b is (..., K, N) with the same leading
dims, or a plain (K, N) matrix shared by every batch (as in ``Linear``).

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> a = Tensor.from_host(queue, [[1.0, 2.0], [3.0, 4.0]])
>>> F.matmul(a, a).value.to_host()
array([[ 7., 10.],
       [15., 22.]], dtype=float32)

Four kernels compute the same product. ``matmul_forward`` is the simple
one (one work-item per output value): the chapters read it and the tests use
it as the oracle. ``matmul_register_tile`` is the rung above it: a work-item
keeps a 4 x 8 block of C in registers and reads A and B in place, bounds
tested, so each number it loads serves several multiply-adds; it runs only
when asked (``kernel="register_tile"``, or ``F.matmul_register_tile``) and
gives the same sums as the simple one, in the same order.
``matmul_tiled`` keeps a tile of C in vector registers
(``kernels/register_tile.cl``; about 0.8-1x numpy's speed on a CPU), reads
A and B in place or from packed panels (``matmul_pack_a``, ``_b``, ``_ab``);
it runs whenever the product is big enough. Its tile is chosen for the
device (``netcl_lite/core/tune.py``). ``matmul_few_rows`` serves A with
fewer than FEW_ROWS (8) rows, such as the one new token of KV-cache
decoding. Which of the two runs depends on the shape only, never on the
tile, so every tile runs the same kernels (a tile of 14 rows packs 8-13 rows
of A into one zero-padded panel instead).
``kernel=`` names the kernel when the shape should not choose:
``F.matmul(a, b, kernel="simple")`` (or ``F.matmul_simple``), "register_tile"
(or ``F.matmul_register_tile``), or "tiled" (``matmul_tiled``, and
``matmul_few_rows`` for fewer than FEW_ROWS rows):

>>> F.matmul_simple(a, a).value.to_host()
array([[ 7., 10.],
       [15., 22.]], dtype=float32)
>>> F.matmul(a, a, kernel="register_tile").value.to_host()
array([[ 7., 10.],
       [15., 22.]], dtype=float32)
"""

import math

import numpy as np

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import (LOCAL_1D, LOCAL_2D, ceil_div, launch,
                                     local_1d)
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.tune import matmul_config, options
from netcl_lite.core.validate import min_ndim
from netcl_lite.core.work import FLOAT, counts

FAST_MIN_MNK = 48 ** 3  # below: the simple kernel is faster (one launch, no tile)
FEW_ROWS = 8            # M below this: matmul_few_rows, for every tile (and the
                        # fast path at any M*N*K once N*K >= FEW_ROWS_MIN_NK)
FEW_ROWS_MIN_NK = 64 * 64
FEW_V = 8               # vectors of C per work-item in matmul_few_rows (at most)
PACK_ROWS = 64          # rows k per work-item of the packing kernels (matmul.cl)
PACK_MIN_K = 512        # beyond this K a long walk: see _a_in_place, _b_in_place
ALIAS_MIN_M = 64        # from these rows of A, aliasing rows of B are packed
RT_M, RT_N = 4, 8       # the block of C per work-item of matmul_register_tile


def matmul_simple_strided(a, b, batch, M, N, K, a_strides, b_strides):
    """C (batch, M, N) = A @ B, one work-item per value of C."""
    out = Tensor.empty(a.device, (batch, M, N))
    launch(a.device, "matmul", "matmul_forward", (N, batch * M), LOCAL_2D,
           a, b, out, batch, M, N, K, *a_strides, *b_strides)
    return out


def matmul_register_tile_strided(a, b, batch, M, N, K, a_strides, b_strides):
    """C (batch, M, N) = A @ B, one RT_M x RT_N block of C per work-item,
    A and B read in place through their strides (any shape)."""
    out = Tensor.empty(a.device, (batch, M, N))
    launch(a.device, "matmul", "matmul_register_tile",
           (ceil_div(N, RT_N), batch * ceil_div(M, RT_M)), LOCAL_2D,
           a, b, out, batch, M, N, K, *a_strides, *b_strides)
    return out


def matmul_few_rows_strided(a, b, batch, M, N, K, a_strides, b_strides,
                            config=None):
    """C (batch, M, N) = A @ B for a few rows of A (decoding: M = 1): one
    work-item per FEW_V vectors of one row of C, B's rows streamed."""
    cfg = config or tile_config(a.device)
    VW = cfg["VW"]
    NC = max(1, min(FEW_V, N // VW)) * VW     # columns per work-item
    b_bs, b_rs, b_cs = b_strides
    vec = int(b_cs == 1 and N % VW == 0
              and b_rs % VW == 0 and b_bs % VW == 0)
    out = Tensor.empty(a.device, (batch, M, N))
    launch(a.device, "matmul", "matmul_few_rows", (batch * M * ceil_div(N, NC),),
           LOCAL_1D, a, b, out, batch, M, N, K, np.int64(a_strides[0]),
           a_strides[1], a_strides[2], np.int64(b_bs), b_rs, b_cs, vec,
           options=options(cfg))
    return out


def _row_blocks(batch, PM, PN):
    """Row panels per work-item: 16, fewer when that would leave under 16
    work-groups of 64: the cores share out whole groups, so a few big ones
    leave a core idle at the end."""
    RB = 16
    while RB > 1 and batch * ceil_div(PM, RB) * PN < 16 * 64:
        RB //= 2
    return RB


def _b_in_place(M, N, K, b_strides, VW, NR, a_in_place):
    """Can matmul_tiled read B where it is? Rows contiguous and VW-aligned,
    N >= NR (the last panel shifts back), and the rows not a multiple of
    2 KB apart (b_rs % 512 == 0) when a panel of them is read many times.
    Such rows map to the same few cache sets and evict each other (4 KB
    apart, all of them meet in one of L1's 64 sets), so every row panel
    of A reads its B panel again from L2: with M >= ALIAS_MIN_M they are
    packed whatever K (measured, two cores, copies included: (2048 x 128)
    @ (128 x 1024) 11.4 ms in place, 9.1 packed; (256 x 512) @ (512 x 512)
    3.6 and 1.9 ms; N = 352, rows 1408 bytes apart: the same either way).
    Nor a long walk (K > PACK_MIN_K) beside a packed A (the weight
    gradient): a long walk meets a new page every few rows, which the
    prefetcher does not follow; a packed panel is one contiguous stream, and
    the copy costs a few percent (measured, one core, A^T packed, K = 2048:
    (128 x 2048) @ (2048 x 1024) 61 GFLOP/s with B in place, 87 packed,
    copies included; @ (2048 x 352): 82 and 95)."""
    b_bs, b_rs, b_cs = b_strides
    aliased = b_rs % 512 == 0 and (M >= ALIAS_MIN_M or K > PACK_MIN_K)
    long_walk = K > PACK_MIN_K and not a_in_place
    return (b_cs == 1 and N >= NR and not aliased and not long_walk
            and N % VW == 0 and b_rs % VW == 0 and b_bs % VW == 0)


def _a_in_place(K, a_strides):
    """Can matmul_tiled read A where it is? Yes when A's rows are contiguous
    (a_cs = 1): each k of a tile reads MR numbers from MR rows, streams the
    prefetcher follows; and when K <= PACK_MIN_K. A long A^T (the weight
    gradient X^T @ G over many tokens, a_cs = M) is packed: read in place,
    each k is a new cache line 4 * M bytes after the last, of which a tile
    uses MR numbers (measured at (128 x 2048) @ (2048 x 352), one core, the
    kernel alone: 62-78 GFLOP/s in place, 110-113 on packed panels; the
    peak is about 115)."""
    return a_strides[2] == 1 or K <= PACK_MIN_K


def tile_config(device):
    """The register tile for a device, a Device or a queue (core/tune.py
    chooses it, timing a few candidates with ``_square`` on first use)."""
    return matmul_config(device, _square)


def _square(a, config):
    n = a.shape[0]
    strides = (n * n, n, 1)
    return matmul_tiled_strided(a, a, 1, n, n, n, strides, strides, config)


def matmul_tiled_strided(a, b, batch, M, N, K, a_strides, b_strides, config=None):
    """C (batch, M, N) = A @ B with the register tile (same strides);
    ``config``: the tile's build macros (default: ``tile_config``).

    M < FEW_ROWS goes to ``matmul_few_rows``, whatever the tile. A with
    fewer rows than the tile (8-13 rows, 14-row tile) is packed into one
    zero-padded panel: read in place, the last panel would shift back to
    end at row M and start before row 0.
    """
    device = a.device
    cfg = config or tile_config(device)
    VW, MR = cfg["VW"], cfg["TILE_M"]
    NR = cfg["TILE_V"] * VW
    opts = options(cfg)
    if M < FEW_ROWS:   # a row per work-item beats a tile of padding
        return matmul_few_rows_strided(a, b, batch, M, N, K, a_strides,
                                       b_strides, cfg)
    if K == 0:
        return matmul_simple_strided(a, b, batch, M, N, K, a_strides, b_strides)
    out = Tensor.empty(device, (batch, M, N))
    if N == 0:
        return out
    PM, PN = ceil_div(M, MR), ceil_div(N, NR)
    a_in_place = _a_in_place(K, a_strides)
    # Fewer rows than the tile: one packed panel, zero rows past M. B's rule
    # stays that of A in place: one row panel reads B once, so packing B too
    # only adds a copy (measured, 14-row tile, (13 x 2048) @ (2048 x 128):
    # 316 us with B in place, 354 us packed).
    pack_a = M < MR or not a_in_place
    pack_b = not _b_in_place(M, N, K, b_strides, VW, NR, a_in_place)
    b_batch = 1 if b_strides[0] == 0 else batch
    k_blocks = ceil_div(K, PACK_ROWS)
    aq, a_st, a_packed = a, a_strides, 0
    bq, b_bs, b_ps, ldb, b_packed = b, b_strides[0], NR, b_strides[1], 0
    if pack_a:   # copy A (or A^T) into zero-padded panels of MR rows, once
        aq = Tensor.empty(device, (batch, PM, K, MR))
        a_st, a_packed = (PM * K * MR, 1, MR), 1
    if pack_b:   # copy B (or B^T) into zero-padded panels of NR columns, once
        bq = Tensor.empty(device, (b_batch, PN, K, NR))
        b_bs = 0 if b_batch == 1 else PN * K * NR
        b_ps, ldb, b_packed = K * NR, NR, 1
    a_args = (np.int64(a_strides[0]), a_strides[1], a_strides[2])
    b_args = (np.int64(b_strides[0]), b_strides[1], b_strides[2])
    if pack_a and pack_b:   # both in one launch (the weight gradient)
        launch(device, "matmul", "matmul_pack_ab",
               (batch * PM + b_batch * PN, k_blocks), LOCAL_2D, a, b, aq, bq,
               batch, b_batch, M, N, K, *a_args, *b_args, options=opts)
    elif pack_a:
        launch(device, "matmul", "matmul_pack_a", (batch * PM, k_blocks),
               LOCAL_2D, a, aq, batch, M, K, *a_args, options=opts)
    elif pack_b:
        launch(device, "matmul", "matmul_pack_b", (b_batch * PN, k_blocks),
               LOCAL_2D, b, bq, b_batch, K, N, *b_args, options=opts)
    RB = _row_blocks(batch, PM, PN)
    items = batch * ceil_div(PM, RB) * PN
    launch(device, "matmul", "matmul_tiled", (items,), local_1d(items),
           aq, bq, out, batch, M, N, K, RB, np.int64(a_st[0]), a_st[1],
           a_st[2], np.int64(b_bs), np.int64(b_ps), ldb, b_packed, a_packed,
           options=opts)
    return out


@counts("matmul_forward", "matmul_register_tile", "matmul_few_rows",
        "matmul_tiled")
def _product_work(a):
    # C (batch, M, N) = A (batch, M, K) @ B (K, N): 2 M N K FLOPs; A, B and
    # C each moved once (A shared when a_bs = 0, B when b_bs = 0; the
    # packed A of matmul_tiled has no a_bs: never shared)
    a_count = a["batch"] if a.get("a_bs", 1) else 1
    b_count = a["batch"] if a["b_bs"] else 1
    return (2 * a["batch"] * a["M"] * a["N"] * a["K"],
            FLOAT * (a_count * a["M"] * a["K"] + b_count * a["K"] * a["N"]
                     + a["batch"] * a["M"] * a["N"]))


@counts("matmul_pack_ab")
def _pack_ab_work(a):
    # copies into panels: every value read once and written once, no FLOPs
    return 0, 2 * FLOAT * (a["batch"] * a["M"] * a["K"]
                           + a["b_batch"] * a["K"] * a["N"])


@counts("matmul_pack_a")
def _pack_a_work(a):
    return 0, 2 * FLOAT * a["batch"] * a["M"] * a["K"]


@counts("matmul_pack_b")
def _pack_b_work(a):
    return 0, 2 * FLOAT * a["batch"] * a["K"] * a["N"]


# matmul's kernel= names: the ladder of kernels/matmul.cl, simplest first
KERNELS = {"simple": matmul_simple_strided,
           "register_tile": matmul_register_tile_strided,
           "tiled": matmul_tiled_strided}


def matmul_strided(a, b, batch, M, N, K, a_strides, b_strides, kernel=None):
    """C (batch, M, N) = A @ B for raw buffers read through strides.

    Element (b, i, k) of A is ``a[b*a_bs + i*a_rs + k*a_cs]`` with
    ``a_strides = (a_bs, a_rs, a_cs)``; likewise B. ``kernel=None`` picks
    "tiled" when M*N*K >= FAST_MIN_MNK (``matmul_few_rows`` when
    M < FEW_ROWS), and ``matmul_few_rows`` for M < FEW_ROWS rows times a
    matrix of N*K >= FEW_ROWS_MIN_NK, else "simple"; a name in KERNELS
    forces that kernel.
    """
    if kernel is None:
        kernel = "tiled" if M * N * K >= FAST_MIN_MNK or (
            M < FEW_ROWS and N * K >= FEW_ROWS_MIN_NK) else "simple"
    return KERNELS[kernel](a, b, batch, M, N, K, a_strides, b_strides)


def _check(a, b):
    min_ndim(a, 2, "matmul", "a")
    min_ndim(b, 2, "matmul", "b")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"matmul: inner sizes differ: a is {a.shape} (K={a.shape[-1]}), "
            f"b is {b.shape} (K={b.shape[-2]})"
        )
    if len(b.shape) > 2 and a.shape[:-2] != b.shape[:-2]:
        raise ValueError(
            f"matmul: batch dims differ: a {a.shape[:-2]} vs b {b.shape[:-2]}"
        )


def matmul(a, b, kernel=None):
    """a @ b, batched over the leading dims (``kernel``: None, the shape
    chooses, or one of KERNELS; see matmul_strided. The backward's two
    products take the same ``kernel``)."""
    a, b = nodes(a, b, op="matmul")
    if kernel is not None and (not isinstance(kernel, str)
                               or kernel not in KERNELS):
        raise ValueError(f"matmul: kernel must be None or one of "
                         f"{sorted(KERNELS)}, got {kernel!r}")
    _check(a, b)
    *lead, M, K = a.shape
    N = b.shape[-1]
    shared_b = len(b.shape) == 2
    if shared_b:  # fold the batch into the rows: (..., M, K) -> (1, R, K)
        batch, M = 1, math.prod(lead) * M
    else:
        batch = math.prod(lead)
    out_shape = (*lead, a.shape[-2], N)
    av, bv = a.value, b.value
    b_bs = 0 if shared_b else K * N
    out = matmul_strided(av, bv, batch, M, N, K, (M * K, K, 1),
                         (b_bs, N, 1), kernel).reshape(out_shape)

    def backward(g):
        # grad_a = g @ b^T : (batch, M, N) @ (batch, N, K); b^T read by strides
        ga = matmul_strided(g, bv, batch, M, K, N,
                            (M * N, N, 1), (b_bs, 1, N), kernel)
        # grad_b = a^T @ g : (batch, K, M) @ (batch, M, N)
        gb = matmul_strided(av, g, batch, K, N, M,
                            (M * K, 1, K), (M * N, N, 1), kernel)
        return ga.reshape(a.shape), gb.reshape(b.shape)

    return record(out, (a, b), backward, "matmul")


def matmul_simple(a, b):
    """``matmul`` on the simple kernel only (the chapters' version, the oracle)."""
    return matmul(a, b, kernel="simple")


def matmul_register_tile(a, b):
    """``matmul`` on the register tile only (``matmul_register_tile`` in
    kernels/matmul.cl, the rung between the simple kernel and the fast one),
    forward and gradients."""
    return matmul(a, b, kernel="register_tile")
