"""Quantised weights (chapter 14): the kernels against numpy and llama.cpp.

- decoding: one token's matrix-vector products over SmolLM2-135M's weights
  as the GGUF file stores them (210 Q4_1 matrices and the Q8_0 head), and
  the first 10 layers re-quantised to Q4_0 and F16; GB/s of blocks from
  OpenCL profiling events (each launch's best over the rounds: kernel time
  only) and from the wall clock, back to back, next to numpy's float32
  x @ W.T on the same matrices (dequantised);
- prefill: (512 x 576) @ W^T with W (1536 x 576), and the down projection's
  (512 x 1536) @ W^T, quantised (blocks dequantised into float32 chunks,
  then the tuned matmul) against the float32 matmul and numpy, in GFLOP/s;
- llama.cpp, when ``llama_cpp`` (llama-cpp-python) imports: prefill of 512
  tokens and decoding on the same file and threads, the speed anchor;
- ``--memory`` (alone, in a fresh process): VmRSS after imports and the
  device, then after a QuantizedWeight of every quantised tensor of the
  file (its float32 norms as Tensors) with the file's memory map released,
  then after one product with each (kernels built).

Every library runs on the same number of threads (``BENCH_THREADS``,
default all cores). A shared machine only ever adds time: compare ratios
of one run, the best of interleaved rounds.

    python bench/quantized.py [--rounds 7] [--no-llama]
    python bench/quantized.py --memory
"""

import argparse
import gc
import os
import pathlib
import sys
import time

THREADS = int(os.environ.get("BENCH_THREADS", os.cpu_count() or 1))
os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", str(THREADS))
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(THREADS))

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import gguf  # noqa: E402
import numpy as np  # noqa: E402

import netcl_lite.functional as F  # noqa: E402
from netcl_lite.core.device import manager  # noqa: E402
from netcl_lite.core.quantized import QuantizedWeight  # noqa: E402
from netcl_lite.core.roofline import (copy_bandwidth, profile,  # noqa: E402
                                      profiling_queue)
from netcl_lite.core.tensor import Tensor  # noqa: E402
from netcl_lite.functional.quantized import matvec  # noqa: E402
from netcl_lite.nn.hub import fetch  # noqa: E402
from llama_cpp_import import import_llama_cpp  # noqa: E402

SETTLE = 0.1     # s; idle OpenBLAS/OpenMP threads spin this long before parking
PROMPT = 512     # prefill tokens
DECODE = 32      # decoding steps a round (llama.cpp)


def best_of(rounds, tasks):
    """{name: best wall seconds}, the tasks interleaved round by round."""
    for run in tasks.values():   # build, allocate, touch every page
        run()
    best = dict.fromkeys(tasks, float("inf"))
    for _ in range(rounds):
        for name, run in tasks.items():
            time.sleep(SETTLE)
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def load_sets(queue, path):
    """{format: ([QuantizedWeight], [float32 W])}: the file's own Q4_1 and
    Q8_0 matrices; its first 70 (10 layers) re-quantised to Q4_0 and F16."""
    reader = gguf.GGUFReader(path)
    sets = {"Q4_1": ([], []), "Q8_0": ([], [])}
    for t in reader.tensors:
        if t.tensor_type.name in sets:
            cols, rows = (int(n) for n in t.shape)   # the file lists cols first
            ws, fs = sets[t.tensor_type.name]
            ws.append(QuantizedWeight(queue, t.data, t.tensor_type.name, rows,
                                      cols))
            fs.append(gguf.quants.dequantize(t.data, t.tensor_type))
    del reader
    gc.collect()
    layers = sets["Q4_1"][1][:70]
    for qtype in ("Q4_0", "F16"):
        sets[qtype] = ([QuantizedWeight.from_float(queue, w, qtype)
                        for w in layers], layers)
    return sets


def bench_decoding(queue, sets, rounds):
    timing = queue          # a profiling queue: the weights were made on it
    rng = np.random.default_rng(0)
    xs = {c: Tensor.from_host(timing, rng.standard_normal((1, c)))
          for c in (576, 1536)}
    xn = {c: x.to_host() for c, x in xs.items()}

    def ours(ws):
        for w in ws:
            y = matvec(xs[w.cols], w, 1)        # (1, rows), from the blocks
        y.to_host()

    def numpy(fs):
        for W in fs:
            xn[W.shape[1]] @ W.T

    print("\n## Decoding: one token's matrix-vector products\n")
    print("| format | matrices | MB of blocks | kernel GB/s | wall ms | "
          "wall GB/s | numpy float32 ms | numpy / ours |")
    print("|---|---|---|---|---|---|---|---|")
    tasks = {}
    for qtype, (ws, fs) in sets.items():
        tasks[("cl", qtype)] = lambda ws=ws: ours(ws)
        tasks[("np", qtype)] = lambda fs=fs: numpy(fs)
    best = best_of(rounds, tasks)
    for qtype, (ws, fs) in sets.items():
        nbytes = sum(w.nbytes for w in ws)
        kernels = profile(timing, lambda ws=ws: ours(ws), steps=rounds)
        mv = sum(k.seconds for k in kernels if k.name.startswith("quant_matvec"))
        wall, ref = best[("cl", qtype)], best[("np", qtype)]
        print(f"| {qtype} | {len(ws)} | {nbytes / 1e6:.1f} | "
              f"{nbytes / mv / 1e9:.1f} | {wall * 1e3:.2f} | "
              f"{nbytes / wall / 1e9:.1f} | {ref * 1e3:.2f} | {ref / wall:.2f} |")
    token = best[("cl", "Q4_1")] + best[("cl", "Q8_0")]
    print(f"\nOne token's products of the file (Q4_1 + Q8_0): {token * 1e3:.1f} ms,"
          f" {1 / token:.0f} tokens/s for the products alone.")


def bench_prefill(queue, rounds):
    rng = np.random.default_rng(0)
    print("\n## Prefill: quantised products of 512 rows\n")
    print("| product | format | quantised GFLOP/s | float32 matmul | numpy |")
    print("|---|---|---|---|---|")
    for M, K, N, qtype in [(PROMPT, 576, 1536, "Q4_1"),
                           (PROMPT, 1536, 576, "Q4_1"),
                           (PROMPT, 576, 1536, "Q8_0")]:
        qw = QuantizedWeight.from_float(queue, rng.standard_normal((N, K)), qtype)
        W = qw.dequantize()                                   # (N, K)
        wt = Tensor.from_host(queue, np.ascontiguousarray(W.T))  # (K, N), Linear's
        x = Tensor.from_host(queue, rng.standard_normal((M, K)))
        xn = x.to_host()
        best = best_of(rounds, {
            "quantized": lambda: F.quantized_matmul(x, qw).value.to_host(),
            "matmul": lambda: F.matmul(x, wt).value.to_host(),
            "numpy": lambda: xn @ W.T})
        flop = 2 * M * K * N
        rate = {k: flop / v / 1e9 for k, v in best.items()}
        print(f"| {M} x {K} x {N} | {qtype} | {rate['quantized']:.0f} | "
              f"{rate['matmul']:.0f} | {rate['numpy']:.0f} |")


def llama_or_none():
    return import_llama_cpp()


def bench_llama(path, rounds):
    llama_cpp = llama_or_none()
    if llama_cpp is None:
        print("\nllama.cpp: skipped, llama_cpp does not import "
              "(pip install llama-cpp-python builds it from source)")
        return
    llm = llama_cpp.Llama(model_path=str(path), n_threads=THREADS,
                          n_threads_batch=THREADS, n_batch=PROMPT,
                          n_ctx=2 * PROMPT, verbose=False)
    ids = [int(i) for i in np.random.default_rng(0).integers(100, 49000, PROMPT)]

    def prefill():
        llm.reset()
        llm.eval(ids)

    def decode():
        for i in range(DECODE):
            llm.eval([ids[i]])

    best = best_of(rounds, {"prefill": prefill, "decode": decode})
    print(f"\n## llama.cpp {llama_cpp.__version__}, {THREADS} threads\n")
    print(f"prefill of {PROMPT} tokens: {PROMPT / best['prefill']:.0f} tokens/s; "
          f"decoding: {DECODE / best['decode']:.0f} tokens/s")


def status_mib(key):
    """A line of /proc/self/status (VmRSS, VmHWM) in MiB."""
    with open("/proc/self/status", encoding="ascii") as f:
        line = next(line for line in f if line.startswith(key + ":"))
    return int(line.split()[1]) / 1024


def bench_memory(queue, path):
    Tensor.from_host(queue, np.ones(4)).to_host()
    gc.collect()
    base = status_mib("VmRSS")
    print(f"after imports and the device: VmRSS {base:.0f} MiB")
    reader = gguf.GGUFReader(path)
    weights, norms = [], []
    for t in reader.tensors:
        if t.tensor_type.name == "F32":
            norms.append(Tensor.from_host(queue, np.array(t.data)))
        else:
            cols, rows = (int(n) for n in t.shape)
            weights.append(QuantizedWeight(queue, t.data, t.tensor_type.name,
                                           rows, cols))
    del reader, t           # the file's memory map goes with its last view
    gc.collect()
    nbytes = sum(w.nbytes for w in weights) + sum(4 * n.size for n in norms)
    rss = status_mib("VmRSS")
    print(f"{len(weights)} QuantizedWeights and {len(norms)} float32 tensors, "
          f"{nbytes / 2**20:.1f} MiB on the device: VmRSS {rss:.0f} MiB "
          f"(+{rss - base:.0f}), VmHWM {status_mib('VmHWM'):.0f} MiB")
    rng = np.random.default_rng(0)
    for w in weights:
        x = Tensor.from_host(queue, rng.standard_normal((1, w.cols)))
        F.quantized_matmul(x, w).value.to_host()
    gc.collect()
    rss = status_mib("VmRSS")
    print(f"after one product with each: VmRSS {rss:.0f} MiB "
          f"(+{rss - base:.0f}), VmHWM {status_mib('VmHWM'):.0f} MiB")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-llama", action="store_true")
    parser.add_argument("--memory", action="store_true")
    args = parser.parse_args()
    device = manager.default("cpu")
    if args.memory:
        return bench_memory(device.queue, fetch("SmolLM2-135M-Instruct"))
    print(f"# {device.name} on {device.platform}, {THREADS} threads; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"device copy bandwidth: {copy_bandwidth(device.queue) / 1e9:.1f} GB/s")
    path = fetch("SmolLM2-135M-Instruct")
    timing = profiling_queue(device.queue)
    sets = load_sets(timing, path)
    bench_decoding(timing, sets, args.rounds)
    del sets
    gc.collect()
    bench_prefill(device.queue, args.rounds)
    if not args.no_llama:
        bench_llama(path, args.rounds)
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
