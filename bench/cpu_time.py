"""CPU time on one thread: ratios that a busy machine does not distort.

On a shared machine the wall clock also counts the time a library waits
for a core, and two-thread libraries suffer most (a thread that loses its
core stalls the other at the next barrier). This script pins every library
to one thread and counts the process's CPU time (PoCL's worker thread
included), best of several alternating runs:

    python bench/cpu_time.py        # markdown: matmul shapes, training step

A ratio here says how much work each library does for the same result;
it leaves out how well each spreads over several cores.
"""

import os
import sys
import time

os.environ["POCL_MAX_PTHREAD_COUNT"] = "1"
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["BENCH_THREADS"] = "1"

import numpy as np  # noqa: E402

import train_step  # noqa: E402  (bench/ is on sys.path when run as a script)

# n x n, then chapter 09's forward and backward products (tokens 2048)
SHAPES = ((256, 256, 256), (1024, 1024, 1024), (2048, 128, 352),
          (2048, 352, 128), (2048, 128, 1024), (128, 2048, 352),
          (2048, 1024, 128))


def cpu_best(fn, repeats=7):
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def matmul_rows(shapes=SHAPES):
    import netcl_lite.functional as F
    from netcl_lite.core.device import manager
    from netcl_lite.core.tensor import Tensor

    queue = manager.default("auto").queue
    rows = []
    for M, K, N in shapes:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((M, K)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
        A, B = Tensor.from_host(queue, a), Tensor.from_host(queue, b)
        def ours_once():      # done when the product is in device memory
            F.matmul(A, B)
            queue.finish()

        ours = cpu_best(ours_once)
        ref = cpu_best(lambda: a @ b)
        flop = 2 * M * N * K / 1e9
        rows.append(((M, K, N), flop / ours, flop / ref))
    return rows


def main():
    lines = ["| (M x K) @ (K x N), 1 thread | netcl_lite GFLOP/s | numpy "
             "GFLOP/s | netcl_lite / numpy |", "|---|---|---|---|"]
    for (M, K, N), ours, ref in matmul_rows():
        lines.append(f"| ({M} x {K}) @ ({K} x {N}) | {ours:.0f} | {ref:.0f} | "
                     f"{ours / ref:.2f} |")
    print("\n".join(lines) + "\n")
    ms, _ = train_step.compare(clock=time.process_time)
    print("CPU time per step, 1 thread:\n\n" + train_step.table(ms))


if __name__ == "__main__":
    sys.exit(main())
