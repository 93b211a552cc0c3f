"""The packed matmul (kernels/matmul.cl: matmul_tiled) against numpy and
against the simple kernel (matmul_forward), its oracle. The tests that go
through F.matmul run once per tile the tuner may choose (``each_tile``,
tests/tiles.py): the tile on a machine is whichever was fastest there."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from strided import strided_operands
from netcl_lite.functional.matmul import matmul_strided
from tiles import TILES, each_tile  # noqa: F401 (each_tile: a fixture)


def run(queue, a, b, kernel):
    a, b = Tensor.from_host(queue, a), Tensor.from_host(queue, b)
    return F.matmul(a, b, kernel=kernel).value.to_host().astype(np.float64)


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("sa,sb", [
    ((1, 1), (1, 1)),
    ((37, 37), (37, 37)),
    ((1, 37), (37, 1)),
    ((1000, 1000), (1000, 1000)),
    ((3, 2, 37, 53), (3, 2, 53, 41)),     # non-square, batched
    ((5, 7, 13), (13, 50)),               # one b for every batch (Linear)
    ((2, 97, 6), (2, 6, 17)),             # edges of the 6 x 16 tile
])
def test_packed_matches_numpy(queue, rng, each_tile, sa, sb):
    a, b = rand(rng, *sa), rand(rng, *sb)
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-5 * np.sqrt(sa[-1])          # float32 rounding grows with K
    got = run(queue, a, b, kernel="tiled")
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("sa,sb", [
    ((37, 37), (37, 37)), ((2, 3, 70, 9), (2, 3, 9, 130)), ((4, 100, 33), (33, 64))])
def test_packed_matches_simple_kernel(queue, rng, each_tile, sa, sb):
    a, b = rand(rng, *sa), rand(rng, *sb)
    np.testing.assert_allclose(run(queue, a, b, "tiled"),
                               run(queue, a, b, "simple"),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transpose_a,transpose_b,shared_b", [
    (False, True, False), (True, False, False), (True, True, False),
    (False, False, True), (True, False, True)])
def test_strided_products_of_the_backward(queue, rng, each_tile, transpose_a,
                                          transpose_b, shared_b):
    batch, M, N, K = 3, 41, 35, 19
    A, B, a_st, b_st, am, bm = strided_operands(
        queue, rng, batch, M, N, K, transpose_a, transpose_b, shared_b)
    fast = matmul_strided(A, B, batch, M, N, K, a_st, b_st, kernel="tiled")
    slow = matmul_strided(A, B, batch, M, N, K, a_st, b_st, kernel="simple")
    want = am.astype(np.float64) @ bm.astype(np.float64)
    np.testing.assert_allclose(fast.to_host(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fast.to_host(), slow.to_host(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sa,sb", [((2, 37, 5), (2, 5, 19)),
                                   ((3, 8, 33), (33, 40)),
                                   ((530, 13), (13, 40))])  # grad_b packs a^T
def test_packed_gradients(queue, rng, each_tile, sa, sb):
    check_op(queue, lambda a, b: F.matmul(a, b, kernel="tiled"), ref.matmul,
             ref.matmul_vjp, [rng.standard_normal(sa), rng.standard_normal(sb)])


def test_dispatch_picks_the_packed_kernel_for_big_products(queue, rng, each_tile):
    small, big = rand(rng, 4, 4), rand(rng, 64, 64)
    with trace() as ran:
        F.matmul(Tensor.from_host(queue, small), Tensor.from_host(queue, small))
    assert ran == ["matmul.cl:matmul_forward"]
    with trace() as ran:
        F.matmul(Tensor.from_host(queue, big), Tensor.from_host(queue, big))
    assert "matmul.cl:matmul_tiled" in ran
    with trace() as ran:
        F.matmul_simple(Tensor.from_host(queue, big), Tensor.from_host(queue, big))
    assert ran == ["matmul.cl:matmul_forward"]


def test_weight_gradient_packs_the_long_a_transposed(queue, rng, each_tile):
    import netcl_lite.autograd as ag
    x, w = rand(rng, 600, 13), rand(rng, 13, 40)      # 600 tokens, one Linear
    with ag.Tape() as tape:
        xt = ag.tensor(Tensor.from_host(queue, x), requires_grad=True)
        wt = ag.tensor(Tensor.from_host(queue, w), requires_grad=True)
        y = F.matmul(xt, wt)
        loss = F.sum(y)
    with trace() as ran:
        tape.backward(loss)
    # x^T @ g: 13 rows, K = 600. Tiled on packed panels under every tile
    # (a 14-row tile used to send its 13 rows to matmul_few_rows)
    assert "matmul.cl:matmul_pack_ab" in ran
    assert "matmul.cl:matmul_few_rows" not in ran
    want = x.T.astype(np.float64) @ np.ones((600, 40))
    np.testing.assert_allclose(wt.grad.to_host(), want, rtol=1e-4, atol=1e-3)


def test_deterministic(queue, rng, each_tile):
    a, b = rand(rng, 2, 200, 77), rand(rng, 2, 77, 90)
    assert np.array_equal(run(queue, a, b, "tiled"), run(queue, a, b, "tiled"))


# each_tile is the same for every example of one run: nothing to reset
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lead=st.lists(st.integers(1, 3), max_size=2), m=st.integers(1, 40),
       k=st.integers(1, 40), n=st.integers(1, 40), shared=st.booleans(),
       seed=st.integers(0, 2**16))
def test_packed_random_shapes(queue, each_tile, lead, m, k, n, shared, seed):
    rng = np.random.default_rng(seed)
    a = rand(rng, *lead, m, k)
    b = rand(rng, k, n) if shared else rand(rng, *lead, k, n)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(run(queue, a, b, "tiled"), want, rtol=1e-5, atol=1e-5)


# Every tile the tuner may choose, on shapes that take each path of
# matmul_tiled: B in place (rows aligned, K <= 512) or packed (B^T, odd N,
# K > 512), shifted last row and column panels, batches, a shared B.
# Here the tile is passed to the kernel, not forced; TILES is tune.TILES.


def check_strided(queue, rng, run, tile, batch, M, N, K, transpose_a,
                  transpose_b, shared_b):
    """``run`` (a strided product with a tile config) against float64 numpy:
    A read transposed or not, B transposed or not, B shared by the batch."""
    from netcl_lite.core.tune import as_config

    A, B, a_st, b_st, am, bm = strided_operands(
        queue, rng, batch, M, N, K, transpose_a, transpose_b, shared_b)
    got = run(A, B, batch, M, N, K, a_st, b_st, as_config(tile)).to_host()
    want = am.astype(np.float64) @ bm.astype(np.float64)
    tol = 1e-5 * np.sqrt(K)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("batch,M,N,K,transpose_a,transpose_b,shared_b", [
    (1, 100, 352, 128, False, False, True),    # B in place, last panels shift
    (2, 67, 96, 40, True, False, False),       # A^T in place, batched
    (1, 50, 512, 600, False, False, True),     # K > 512, rows 2 KB apart: packed
    (3, 29, 35, 19, False, True, False),       # B^T and odd N: packed
    (1, 14, 64, 8, True, True, True),          # exactly one tile of rows
    (2, 9, 40, 64, False, False, False),       # fewer rows than a 14-row tile
    (1, 13, 48, 600, True, False, True),       # ... and a long A^T
    (2, 37, 72, 520, True, False, False),      # long A^T: A and B packed
    (1, 20, 16, 600, True, True, True),        # long A^T, B^T, one column panel
    (3, 14, 40, 530, True, False, True),       # long A^T, batched, B shared
])
def test_every_tile_matches_numpy(queue, rng, tile, batch, M, N, K,
                                  transpose_a, transpose_b, shared_b):
    from netcl_lite.functional.matmul import matmul_tiled_strided
    check_strided(queue, rng, matmul_tiled_strided, tile, batch, M, N, K,
                  transpose_a, transpose_b, shared_b)


def test_tuner_caches_its_choice(queue, tmp_path, monkeypatch):
    import json

    import pyopencl as cl

    from netcl_lite.core import tune
    from netcl_lite.core.device import Device
    from netcl_lite.functional.matmul import tile_config

    path = tmp_path / "tune.json"
    monkeypatch.delenv("NETCL_TILE", raising=False)   # it would skip the timing
    monkeypatch.setenv("NETCL_TUNE_CACHE", str(path))
    monkeypatch.setenv("NETCL_RETUNE", "1")
    monkeypatch.setattr(tune, "_chosen", {})
    fresh = Device(cl.CommandQueue(queue.context))    # no tile yet
    cfg = tile_config(fresh)
    assert (cfg["VW"], cfg["TILE_M"], cfg["TILE_V"]) in tune.candidates(fresh)
    if fresh.kind == "cpu":                       # timed, then stored
        entry = json.loads(path.read_text())[tune.device_key(fresh.cl_device)]
        assert tuple(entry["tile"]) == (cfg["VW"], cfg["TILE_M"], cfg["TILE_V"])
        assert len(entry["ms"]) == len(tune.candidates(fresh))
    monkeypatch.delenv("NETCL_RETUNE")
    monkeypatch.setattr(tune, "_chosen", {})
    monkeypatch.setattr(tune, "_time_tiles", None)  # a second timing would fail
    assert tile_config(Device(cl.CommandQueue(queue.context))) == cfg


def test_tuning_runs_stay_out_of_traces(queue, tmp_path, monkeypatch):
    import pyopencl as cl

    from netcl_lite.core import tune
    from netcl_lite.core.device import Device

    monkeypatch.delenv("NETCL_TILE", raising=False)
    monkeypatch.setenv("NETCL_TUNE_CACHE", str(tmp_path / "tune.json"))
    monkeypatch.setattr(tune, "_chosen", {})
    fresh = Device(cl.CommandQueue(queue.context))    # no tile yet
    a = Tensor.from_host(fresh, np.ones((64, 64), np.float32))
    with trace() as ran:
        F.matmul(a, a)                      # the first: tunes, then runs
    assert ran == ["matmul.cl:matmul_tiled"]


# matmul_few_rows: M < FEW_ROWS (decoding with a KV cache, M = 1). The
# kernel reads only the tile's VW: one tile per vector width.
# B in place and whole vectors (vec = 1), N not a multiple of the vector
# width, N narrower than FEW_V vectors, B^T (scalar path), A^T, batches, a
# shared B, K = 1.
@pytest.mark.parametrize("tile", [(8, 6, 2), (16, 6, 4), (4, 4, 2)])
@pytest.mark.parametrize("batch,M,N,K,transpose_a,transpose_b,shared_b", [
    (1, 1, 1024, 128, False, False, True),     # a decoding step: 16 columns each
    (1, 1, 352, 40, False, False, True),       # last work-item shifts back
    (1, 3, 24, 7, False, False, True),         # N narrower than FEW_V vectors
    (2, 5, 37, 19, False, False, False),       # N % VW != 0: scalar path
    (3, 2, 40, 9, True, True, False),          # A^T and B^T: scalar path
    (2, 1, 64, 1, True, False, True),          # K = 1
])
def test_few_rows_match_numpy(queue, rng, tile, batch, M, N, K, transpose_a,
                              transpose_b, shared_b):
    from netcl_lite.functional.matmul import matmul_few_rows_strided
    check_strided(queue, rng, matmul_few_rows_strided, tile, batch, M, N, K,
                  transpose_a, transpose_b, shared_b)


@pytest.mark.parametrize("sa,sb", [((1, 70), (70, 96)), ((2, 3, 40), (40, 33))])
def test_few_rows_gradients(queue, rng, each_tile, sa, sb):
    # the forward runs matmul_few_rows; grad_a = g @ b^T reads B^T by strides
    check_op(queue, lambda a, b: F.matmul(a, b, kernel="tiled"), ref.matmul,
             ref.matmul_vjp, [rng.standard_normal(sa), rng.standard_normal(sb)])


def test_dispatch_sends_a_few_rows_to_their_kernel(queue, rng, each_tile):
    x, w = rand(rng, 1, 128), rand(rng, 128, 352)   # one token, one Linear
    with trace() as ran:
        got = F.matmul(Tensor.from_host(queue, x), Tensor.from_host(queue, w))
    assert ran == ["matmul.cl:matmul_few_rows"]
    np.testing.assert_allclose(got.value.to_host(), x @ w, rtol=1e-4, atol=1e-4)
    with trace() as ran:                            # the chapters' oracle stays
        F.matmul_simple(Tensor.from_host(queue, x), Tensor.from_host(queue, w))
    assert ran == ["matmul.cl:matmul_forward"]
