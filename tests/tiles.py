"""Run a test once per register tile the tuner may choose (core/tune.py).

The tuner keeps whichever candidate tile was fastest on the machine that
ran first, so a test that passes under one tile and fails under another
passes or fails by a timing. A test that takes the fixture ``each_tile``
runs once per tile in ``tune.TILES``, with that tile forced for its body:

    from tiles import each_tile  # noqa: F401 (a pytest fixture)

    def test_x(queue, each_tile):     # test_x[16x14x2], test_x[8x6x2], ...
        ...

Each tile is one more build of kernels/matmul.cl per process (about 1-2 s
with PoCL's build cache cold).
"""

import pytest

from netcl_lite.core import tune

TILES = tune.TILES


def tile_id(tile):
    """The test id of a tile: (16, 14, 2) -> "16x14x2"."""
    return "x".join(map(str, tile))


@pytest.fixture(params=TILES, ids=tile_id)
def each_tile(request):
    """The forced tile (VW, TILE_M, TILE_V) for this run of the test."""
    with tune.forced_tile(request.param):
        yield request.param


def multiplying_kernels(ran):
    """The kernels of a trace that multiply, without the packing copies.

    Which of matmul_forward, matmul_tiled and matmul_few_rows runs must
    depend on the shape only. Whether an operand is copied into panels
    first may depend on the tile: a panel is TILE_M rows or TILE_V * VW
    columns wide, and B is read in place only when N is a multiple of VW.
    """
    return [name for name in ran if not name.startswith("matmul.cl:matmul_pack")]
