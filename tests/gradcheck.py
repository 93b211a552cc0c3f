"""Check one op three ways against an independent numpy reference.

    forward            kernel output      == reference(x) (float64)
    gradient           kernel gradient    == reference_vjp(x, w)
    finite differences reference_vjp      == (f(x + h v) - f(x - h v)) / 2h
                       kernel gradient    == the same, on the kernel forward

Gradients are taken of loss = sum(op(x) * w) for a random w, so one
backward checks the whole Jacobian-vector product; finite differences are
directional (a random direction v per input), which keeps them cheap.
"""

import numpy as np

import netcl_lite.autograd as ag
import netcl_lite.functional as F
from netcl_lite.core.tensor import Tensor


def _first_mismatch(name, got, want, atol, rtol):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    bad = ~np.isclose(got, want, atol=atol, rtol=rtol)
    if bad.any():
        idx = [tuple(i) for i in np.argwhere(bad)[:5]]
        rows = ", ".join(f"{i}: got {got[i]:.6g} want {want[i]:.6g}" for i in idx)
        raise AssertionError(f"{name}: {bad.sum()} of {bad.size} differ; {rows}")


def run_op(queue, op, arrays, w=None, grad_mask=None):
    """Run op on device copies of arrays -> (output, grads) as numpy."""
    grad_mask = grad_mask or [True] * len(arrays)
    with ag.Tape() as tape:
        xs = [
            ag.tensor(Tensor.from_host(queue, a), requires_grad=m)
            for a, m in zip(arrays, grad_mask)
        ]
        out = op(*xs)
        if w is None:
            return out.value.to_host(), None
        loss = F.sum(F.mul(out, Tensor.from_host(queue, w)))
    tape.backward(loss)
    grads = [x.grad.to_host() if m else None for x, m in zip(xs, grad_mask)]
    return out.value.to_host(), grads


def check_op(queue, op, reference, reference_vjp, arrays, *, grad_mask=None,
             atol=1e-4, rtol=1e-4, fd_step=1e-2, fd_tol=2e-2, seed=0):
    """The three checks; arrays are float64/int numpy inputs."""
    rng = np.random.default_rng(seed)
    grad_mask = grad_mask or [a.dtype.kind == "f" for a in arrays]
    want = reference(*arrays)
    w = rng.standard_normal(want.shape)
    got, grads = run_op(queue, op, arrays, w, grad_mask)
    _first_mismatch("forward", got, want, atol, rtol)
    want_grads = reference_vjp(*arrays, w)
    for i, (g, wg) in enumerate(zip(grads, want_grads)):
        if not grad_mask[i]:
            continue
        _first_mismatch(f"grad[{i}]", g, wg, atol, rtol)
        v = rng.standard_normal(arrays[i].shape)

        def shifted(f, h):
            xs = list(arrays)
            xs[i] = arrays[i] + h * v
            return float(np.sum(f(xs) * w))

        ref_f = lambda xs: reference(*xs)  # noqa: E731
        dev_f = lambda xs: run_op(queue, op, xs, grad_mask=grad_mask)[0]  # noqa: E731
        h = 1e-6
        fd_ref = (shifted(ref_f, h) - shifted(ref_f, -h)) / (2 * h)
        _first_mismatch(f"reference vjp[{i}] vs finite differences",
                        np.sum(wg * v), fd_ref, 1e-6, 1e-5)
        fd_dev = (shifted(dev_f, fd_step) - shifted(dev_f, -fd_step)) / (2 * fd_step)
        _first_mismatch(f"kernel grad[{i}] vs finite differences",
                        np.sum(g * v), fd_dev, fd_tol * max(1.0, abs(fd_dev)), 0)
