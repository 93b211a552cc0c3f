"""The register tile (kernels/matmul.cl: matmul_register_tile), the rung
between the simple kernel (matmul_forward) and the fast one: against the
rung below it, bit for bit (the same sums in the same order), and against
numpy, on odd shapes (partial blocks of its 4 x 8 tile at every edge),
batches, a shared B and operands read transposed through their strides."""

import numpy as np
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from strided import strided_operands
from netcl_lite.functional.matmul import RT_M, RT_N, matmul_strided


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# (batch, M, N, K, A read transposed, B read transposed, one B for all)
@pytest.mark.parametrize("batch,M,N,K,transpose_a,transpose_b,shared_b", [
    (1, 1, 1, 1, False, False, False),     # one value: a tile of padding
    (1, RT_M, RT_N, 5, False, False, False),   # exactly one tile
    (1, 5, 9, 3, False, False, False),     # one row and one column past a tile
    (2, 7, 13, 11, False, False, False),   # batched, partial tiles both ways
    (3, 6, 10, 4, True, False, False),     # A^T, read in place
    (2, 9, 5, 7, False, True, False),      # B^T, read in place
    (2, 3, 17, 6, True, True, False),      # both transposed
    (3, 10, 6, 5, False, False, True),     # one B for every batch (Linear)
    (2, 11, 3, 9, True, True, True),       # ... read transposed
    (1, 4, 8, 0, False, False, False),     # K = 0: zeros
])
def test_register_tile_matches_the_simple_kernel(queue, rng, batch, M, N, K,
                                                 transpose_a, transpose_b,
                                                 shared_b):
    A, B, a_st, b_st, am, bm = strided_operands(
        queue, rng, batch, M, N, K, transpose_a, transpose_b, shared_b)
    with trace() as ran:
        tile = matmul_strided(A, B, batch, M, N, K, a_st, b_st,
                              kernel="register_tile")
    assert ran == ["matmul.cl:matmul_register_tile"]
    simple = matmul_strided(A, B, batch, M, N, K, a_st, b_st, kernel="simple")
    np.testing.assert_array_equal(tile.to_host(), simple.to_host())
    want = am.astype(np.float64) @ bm.astype(np.float64)
    np.testing.assert_allclose(tile.to_host(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sa,sb", [((2, 3, 37, 53), (2, 3, 53, 41)),
                                   ((130, 70), (70, 90))])
def test_register_tile_of_bigger_products(queue, rng, sa, sb):
    """More than one tile in each direction, through F.matmul."""
    a = Tensor.from_host(queue, rand(rng, *sa))
    b = Tensor.from_host(queue, rand(rng, *sb))
    got = F.matmul_register_tile(a, b).value.to_host()
    np.testing.assert_array_equal(got, F.matmul_simple(a, b).value.to_host())
    assert got.shape == (*sa[:-1], sb[-1])


@pytest.mark.parametrize("sa,sb", [((2, 5, 7), (2, 7, 9)), ((3, 6, 4), (4, 11))])
def test_register_tile_gradients(queue, rng, sa, sb):
    """The backward's two products (g @ b^T, a^T @ g) run the same kernel."""
    check_op(queue, F.matmul_register_tile, ref.matmul, ref.matmul_vjp,
             [rng.standard_normal(sa), rng.standard_normal(sb)])
    with ag.Tape() as tape:
        x = ag.tensor(Tensor.from_host(queue, rand(rng, *sa)), requires_grad=True)
        w = ag.tensor(Tensor.from_host(queue, rand(rng, *sb)), requires_grad=True)
        loss = F.sum(F.matmul(x, w, kernel="register_tile"))
    with trace() as ran:
        tape.backward(loss)
    products = [k for k in ran if k.startswith("matmul.cl")]
    assert products == ["matmul.cl:matmul_register_tile"] * 2, ran


def test_kernel_names_one_of_four_choices(queue):
    a = Tensor.from_host(queue, np.ones((2, 2), np.float32))
    for kernel in (None, "simple", "register_tile", "tiled"):
        with trace() as ran:
            out = F.matmul(a, a, kernel=kernel)
        np.testing.assert_array_equal(out.value.to_host(), 2.0)
        want = {None: "matmul_forward", "simple": "matmul_forward",
                "register_tile": "matmul_register_tile",
                "tiled": "matmul_few_rows"}[kernel]     # 2 rows: few rows
        assert ran[-1] == f"matmul.cl:{want}"
    with pytest.raises(ValueError, match=r"kernel must be None or one of "
                                         r"\['register_tile', 'simple', "
                                         r"'tiled'\], got 'tile'"):
        F.matmul(a, a, kernel="tile")
