"""Kernel benchmarks (`make bench`): netcl_lite next to numpy and torch.

- matmul GFLOP/s: the tiled kernel (F.matmul), the simple one (small n),
  numpy (OpenBLAS), torch; n x n, chapter 09's training shapes, their weight
  gradients (X^T @ G, X^T read in place) and one token of decoding
- attention, B=1 H=8 d=64 causal, S in {256, 1024, 4096}: the four-kernel
  path (F.attention_naive), the fused kernel (F.scaled_dot_product_attention),
  numpy (float32, S x S materialized), torch's CPU SDPA; ms and the peak
  process memory one call adds (peak RSS minus RSS before the call, in a
  fresh subprocess: tracemalloc cannot see OpenCL buffers); the fused kernel
  also at S = 8192; forward and forward + backward against torch SDPA
- chapter 09's training step and KV-cache generation against a torch twin
  (bench/train_step.py)
- build: every kernel file built with PoCL's cache empty (cold) and full (warm),
  and the first chapter's first kernel (import, device, one matmul)

Every library runs on the same number of threads (``BENCH_THREADS``, default
all cores). Times are wall clock, the best of a few interleaved repeats: on
a shared machine compare the ratios of one run, not absolute numbers.

    python bench/kernels.py            # prints markdown tables
"""

import json
import math
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

THREADS = int(os.environ.get("BENCH_THREADS", os.cpu_count() or 1))
os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", str(THREADS))
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(THREADS))

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numpy as np  # noqa: E402

REPEATS = 5  # best of; the short runs repeat more (see bench_*)
SETTLE = 0.1  # s; idle OpenBLAS/OpenMP threads spin this long before parking
ATTN = dict(B=1, H=8, d=64)
ATTN_LENGTHS = (256, 1024, 4096)
MATMUL_SIZES = (256, 1024, 2048)


# --- the other libraries, each optional ---------------------------------------
def torch_or_none():
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(THREADS)
    return torch


def blas_info():
    """(OpenBLAS kernel name, threads) via threadpoolctl, or a note."""
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        return "threadpoolctl not installed: numpy threads from OPENBLAS_NUM_THREADS"
    threadpool_limits(THREADS)
    blas = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    if not blas:
        return "no BLAS found by threadpoolctl"
    return f"{blas[0].get('internal_api')} {blas[0].get('architecture')}, " \
           f"{blas[0].get('num_threads')} threads"


def machine():
    """One line about this machine, from what it reports: the CPU model and
    its vector instructions (/proc/cpuinfo), the OpenCL device and its
    preferred float vector width, the matmul tile the tuner chose for it,
    and the load average (other processes share the cores)."""
    name = platform.processor() or platform.machine()
    flags = []
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = line.split(":", 1)[1].split()
                break
    except OSError:
        pass
    simd = [f for f in ("avx512f", "avx2", "fma") if f in flags]
    text = f"{name} ({', '.join(simd) or 'no AVX'}), {os.cpu_count()} cores, " \
           f"{THREADS} threads"
    try:
        from netcl_lite.functional.matmul import tile_config
        queue = device_queue()
        dev = queue.device
        cfg = tile_config(queue)
        text += (f"; OpenCL: {dev.name.strip()} ({dev.platform.version.strip()}),"
                 f" preferred float vector width {dev.preferred_vector_width_float},"
                 f" matmul tile {cfg['TILE_M']} x {cfg['TILE_V'] * cfg['VW']}"
                 f" in float{cfg['VW']}")
    except Exception as err:  # noqa: BLE001 - the report still runs
        text += f"; OpenCL device: {err}"
    return text


def load_average():
    try:
        return "load average %.1f %.1f %.1f" % os.getloadavg()
    except OSError:
        return "load average unknown"


# --- timing ---------------------------------------------------------------------
def interleaved_best(fns, repeats=REPEATS):
    """{name: best seconds}, round-robin over the fns, so load on a shared
    machine hits them all alike. Each turn first makes one untimed call:
    thread pools (PoCL's, OpenBLAS's, torch's) park when idle. Before that,
    a short pause lets the previous library's threads stop spinning (they
    would steal the cores). The timed call then sees the library in its
    steady state, as in a loop of its own."""
    best = {name: math.inf for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            time.sleep(SETTLE)  # let the last library's spinning threads stop
            fn()
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def device_queue():
    from netcl_lite.core.device import manager
    return manager.default("auto").queue


# --- matmul ---------------------------------------------------------------------
def bench_matmul(sizes=MATMUL_SIZES):
    """GFLOP/s of n x n @ n x n. netcl_lite's time ends when the product is
    in device memory (``queue.finish()``), where training leaves it; a copy
    back into a new numpy array would be work numpy's ``a @ b`` does not do
    (the results are compared once, before timing)."""
    import netcl_lite.functional as F
    from netcl_lite.core.tensor import Tensor

    q, torch = device_queue(), torch_or_none()
    rows = []
    for n in sizes:
        rng = np.random.default_rng(n)
        a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
        A, B = Tensor.from_host(q, a), Tensor.from_host(q, b)

        def ours(kernel="tiled"):   # done when the product is on the device
            F.matmul(A, B, kernel=kernel)
            q.finish()

        fns = {"netcl_lite": ours, "numpy": lambda: a @ b}
        if n <= 256:
            fns["netcl_lite simple"] = lambda: ours("simple")
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            fns["torch"] = lambda: ta @ tb
        for fn in fns.values():
            fn()  # warm up: kernel compile, thread pools
        got = F.matmul(A, B).value.to_host()
        assert np.allclose(got, a @ b, rtol=1e-3, atol=1e-3 * math.sqrt(n))
        best = interleaved_best(fns, repeats={256: 30, 1024: 20}.get(n, 8))
        rows.append({"n": n, **{k: 2 * n**3 / t / 1e9 for k, t in best.items()}})
    return rows


# chapter 09's training shapes: (tokens x D) @ (D x hidden) and the head
SKINNY = ((2048, 128, 352), (2048, 352, 128), (2048, 128, 1024))
# its weight gradients X^T @ G over the 2048 tokens, X^T read by strides
# (as matmul's backward does): (D x tokens) @ (tokens x hidden)
WEIGHT_GRADS = ((128, 2048, 352), (352, 2048, 128), (128, 2048, 1024),
                (128, 2048, 64))
# one token of KV-cache decoding through a Linear and the head
DECODE = ((1, 128, 352), (1, 128, 1024))


def bench_matmul_shapes(shapes=SKINNY, transpose_a=False):
    """GFLOP/s at (M x K) @ (K x N), netcl_lite next to numpy and torch;
    ``transpose_a``: A is stored as (K x M) and read transposed, in place
    (numpy and torch get the transposed view too)."""
    import netcl_lite.functional as F
    from netcl_lite.core.tensor import Tensor
    from netcl_lite.functional.matmul import matmul_strided

    q, torch = device_queue(), torch_or_none()
    rows = []
    for M, K, N in shapes:
        rng = np.random.default_rng(M + K + N)
        stored = rng.standard_normal((K, M) if transpose_a else (M, K))
        a = stored.astype(np.float32).T if transpose_a else stored.astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
        A, B = Tensor.from_host(q, np.ascontiguousarray(a.T if transpose_a else a)), \
            Tensor.from_host(q, b)

        def product():
            if transpose_a:   # grad_b of matmul's backward: (1, M, K) by strides
                return matmul_strided(A, B, 1, M, N, K, (M * K, 1, M),
                                      (K * N, N, 1))
            return F.matmul(A, B).value

        def ours():            # done when the product is in device memory
            product()
            q.finish()

        fns = {"netcl_lite": ours, "numpy": lambda: a @ b}
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            fns["torch"] = lambda: ta @ tb
        for fn in fns.values():
            fn()
        got = product().to_host().reshape(M, N)
        assert np.allclose(got, a @ b, rtol=1e-3, atol=1e-3 * math.sqrt(K))
        best = interleaved_best(fns, repeats=15)
        rows.append({"shape": (M, K, N), "transpose_a": transpose_a,
                     **{k: 2 * M * N * K / t / 1e9 for k, t in best.items()}})
    return rows


# --- attention ------------------------------------------------------------------
def numpy_attention(q, k, v, causal=True):
    """float32 numpy, the S x S matrix materialized: the reference."""
    S, d = q.shape[-2], q.shape[-1]
    s = (q @ np.swapaxes(k, -1, -2)) * np.float32(1 / math.sqrt(d))  # (B,H,S,S)
    if causal:
        s = np.where(np.tri(S, dtype=bool), s, np.float32(-np.inf))
    s -= s.max(-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(-1, keepdims=True)
    return s @ v                                                      # (B,H,S,d)


def attention_inputs(S, seed=0):
    rng = np.random.default_rng(seed)
    shape = (ATTN["B"], ATTN["H"], S, ATTN["d"])
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]


def attention_runner(impl, S):
    """A no-argument function that runs one attention forward to the host."""
    qa, ka, va = attention_inputs(S)
    if impl == "numpy":
        return lambda: numpy_attention(qa, ka, va)
    if impl == "torch":
        torch = torch_or_none()
        tq, tk, tv = (torch.from_numpy(x) for x in (qa, ka, va))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        return lambda: sdpa(tq, tk, tv, is_causal=True).numpy()
    import netcl_lite.functional as F
    from netcl_lite.core.tensor import Tensor
    q = device_queue()
    Q, K, V = (Tensor.from_host(q, x) for x in (qa, ka, va))
    op = {"naive": F.attention_naive, "fused": F.scaled_dot_product_attention}[impl]
    return lambda: op(Q, K, V, causal=True).value.to_host()


def peak_rss_growth(impl, S):
    """Run in a subprocess: MiB of peak RSS one call adds, and its seconds."""
    out = subprocess.run(
        [sys.executable, __file__, "--memory", impl, str(S)],
        capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _rss_kib(field):
    """VmRSS (now) or VmHWM (peak) of this process, KiB, from /proc."""
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise OSError(f"no {field} in /proc/self/status")


def _memory_child(impl, S):
    attention_runner(impl, 64)()            # compile kernels, start pools
    run = attention_runner(impl, S)         # inputs ready (not counted)
    try:  # "5" resets the peak (VmHWM) to the current RSS (Linux >= 4.0)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = _rss_kib("VmRSS")
    except OSError:
        import resource
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    try:
        after = _rss_kib("VmHWM")
    except OSError:
        import resource
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"mib": (after - before) / 1024, "s": seconds}))


def bench_attention(lengths=ATTN_LENGTHS):
    impls = ["naive", "fused", "numpy"]
    if torch_or_none() is not None:
        impls.append("torch")
    rows = []
    for S in lengths:
        fns = {impl: attention_runner(impl, S) for impl in impls}
        want = fns["numpy"]()
        assert np.allclose(fns["fused"](), want, atol=1e-4)
        best = interleaved_best(fns, repeats={256: 20, 1024: 8}.get(S, 3))
        mem = {impl: peak_rss_growth(impl, S)["mib"] for impl in impls}
        rows.append({"S": S, "ms": {k: t * 1e3 for k, t in best.items()},
                     "mib": mem})
    return rows


def attention_train_runner(impl, S):
    """Forward + backward of causal attention (B=1 H=8 d=64), seeded dO."""
    qa, ka, va = attention_inputs(S)
    g = attention_inputs(S, seed=1)[0]
    if impl == "torch":
        torch = torch_or_none()
        tq, tk, tv = (torch.from_numpy(x).requires_grad_() for x in (qa, ka, va))
        tg = torch.from_numpy(g)
        sdpa = torch.nn.functional.scaled_dot_product_attention

        def run():
            out = sdpa(tq, tk, tv, is_causal=True)
            grads = torch.autograd.grad(out, (tq, tk, tv), tg)
            return [x.numpy() for x in grads]
        return run
    import netcl_lite.autograd as ag
    import netcl_lite.functional as F
    from netcl_lite.core.tensor import Tensor
    q = device_queue()
    Q, K, V, G = (Tensor.from_host(q, x) for x in (qa, ka, va, g))

    def run():
        with ag.Tape() as tape:
            xs = [ag.tensor(t) for t in (Q, K, V)]
            out = F.scaled_dot_product_attention(*xs, causal=True)
        tape.backward(out, G)
        return [x.grad.to_host() for x in xs]
    return run


def bench_attention_torch(lengths=(1024, 2048, 4096, 8192)):
    """The fused kernel against torch SDPA: forward, and forward + backward
    (S <= 4096), ms; the ratio is what the issue's goals are stated in."""
    if torch_or_none() is None:
        return []
    rows = []
    for S in lengths:
        fns = {"fused": attention_runner("fused", S),
               "torch": attention_runner("torch", S)}
        if S <= 4096:
            fns["fused fwd+bwd"] = attention_train_runner("fused", S)
            fns["torch fwd+bwd"] = attention_train_runner("torch", S)
            mine, theirs = fns["fused fwd+bwd"](), fns["torch fwd+bwd"]()
            for x, y in zip(mine, theirs):
                assert np.allclose(x, y, atol=2e-4), float(np.abs(x - y).max())
        best = interleaved_best(fns, repeats={1024: 6, 2048: 4}.get(S, 2))
        rows.append({"S": S, "ms": {k: t * 1e3 for k, t in best.items()}})
    return rows


def bench_long(S=8192):
    """The fused kernel at S = 8192: one S x S fp32 matrix would be 256 MiB."""
    res = peak_rss_growth("fused", S)
    return {"S": S, "mib": res["mib"], "ms": res["s"] * 1e3,
            "sxs_mib": S * S * 4 / 2**20}


# --- build ----------------------------------------------------------------------
def _build_child():
    start = time.perf_counter()
    from netcl_lite.core.program import kernels
    q = device_queue()
    files = sorted(p.stem for p in (ROOT / "kernels").glob("*.cl")
                   if "__kernel" in p.read_text())   # not the shared headers
    t0 = time.perf_counter()
    for name in files:
        kernels(q, name)
    build = time.perf_counter() - t0
    print(json.dumps({"build_all": build, "files": len(files),
                      "setup": t0 - start, "cpu": _cpu_seconds()}))


def _cpu_seconds():
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


_FIRST_KERNEL = """
import time; start = time.perf_counter()
import numpy as np
import netcl_lite.functional as F
from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor
q = manager.default("auto").queue
a = Tensor.from_host(q, np.ones((3, 2)))
F.matmul(a, Tensor.from_host(q, np.ones((2, 3)))).value.to_host()
import resource; r = resource.getrusage(resource.RUSAGE_SELF)
print(time.perf_counter() - start, r.ru_utime + r.ru_stime)
"""


def bench_build():
    """Seconds: all kernel files built, and the first chapter's first kernel
    (a fresh process: import, device, one matmul), cold and warm cache."""
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "POCL_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
        for state in ("cold", "warm"):
            res = subprocess.run([sys.executable, __file__, "--build"], env=env,
                                 capture_output=True, text=True, check=True)
            out[f"build_{state}"] = json.loads(res.stdout.strip().splitlines()[-1])
        shutil_rm(cache)
        for state in ("cold", "warm"):
            res = subprocess.run([sys.executable, "-c", _FIRST_KERNEL], env=env,
                                 capture_output=True, text=True, check=True)
            wall, cpu = res.stdout.strip().splitlines()[-1].split()
            out[f"first_{state}"] = (float(wall), float(cpu))
    return out


def shutil_rm(folder):
    """Empty PoCL's cache folder (keep the folder)."""
    import shutil
    for p in pathlib.Path(folder).iterdir():
        shutil.rmtree(p) if p.is_dir() else p.unlink()


# --- tables ---------------------------------------------------------------------
def fmt(x, digits=0):
    return "-" if x is None else f"{x:.{digits}f}"


def matmul_table(rows):
    lines = ["| n | netcl_lite | numpy | torch | netcl_lite / numpy | "
             "netcl_lite simple |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['n']} | {fmt(r['netcl_lite'])} | {fmt(r['numpy'])} | "
            f"{fmt(r.get('torch'))} | {r['netcl_lite'] / r['numpy']:.2f} | "
            f"{fmt(r.get('netcl_lite simple'), 1)} |")
    return "\n".join(lines)


def shapes_table(rows):
    lines = ["| (M x K) @ (K x N) | netcl_lite | numpy | torch | "
             "netcl_lite / numpy |", "|---|---|---|---|---|"]
    for r in rows:
        M, K, N = r["shape"]
        a = f"({K} x {M})^T" if r.get("transpose_a") else f"({M} x {K})"
        d = 1 if r["numpy"] < 50 else 0          # decoding: a few GFLOP/s
        lines.append(f"| {a} @ ({K} x {N}) | {fmt(r['netcl_lite'], d)} | "
                     f"{fmt(r['numpy'], d)} | {fmt(r.get('torch'), d)} | "
                     f"{r['netcl_lite'] / r['numpy']:.2f} |")
    return "\n".join(lines)


def torch_attention_table(rows):
    lines = ["| S | fused fwd | torch fwd | fused / torch | fused fwd+bwd | "
             "torch fwd+bwd | fused / torch |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        ms = r["ms"]

        def pair(a, b):
            if a not in ms:
                return "- | - | -"
            return f"{ms[a]:.1f} | {ms[b]:.1f} | {ms[a] / ms[b]:.2f}"
        lines.append(f"| {r['S']} | {pair('fused', 'torch')} | "
                     f"{pair('fused fwd+bwd', 'torch fwd+bwd')} |")
    return "\n".join(lines)


def attention_table(rows, long):
    impls = ["naive", "fused", "numpy", "torch"]
    head = " | ".join(f"{i} ms (MiB)" for i in impls)
    lines = [f"| S | {head} | numpy / fused | torch / fused |",
             "|---|" + "---|" * (len(impls) + 2)]
    for r in rows:
        ms, mib = r["ms"], r["mib"]
        cells = " | ".join(
            f"{ms[i]:.1f} ({mib[i]:.0f})" if i in ms else "-" for i in impls)
        torch_ratio = f"{ms['torch'] / ms['fused']:.2f}" if "torch" in ms else "-"
        lines.append(f"| {r['S']} | {cells} | {ms['numpy'] / ms['fused']:.1f} | "
                     f"{torch_ratio} |")
    if long:
        lines.append(f"| {long['S']} | - | {long['ms']:.0f} ({long['mib']:.0f}) "
                     f"| - | - | - | - |")
    return "\n".join(lines)


def build_table(b):
    """Wall seconds, and (in brackets) the process's CPU seconds: on a busy
    machine the wall clock also counts time spent waiting for a core."""
    cold, warm = b["build_cold"], b["build_warm"]
    fc, fw = b["first_cold"], b["first_warm"]
    return "\n".join([
        "| s, wall (cpu) | cold cache | warm cache |", "|---|---|---|",
        f"| build all {cold['files']} kernel files | {cold['build_all']:.2f} | "
        f"{warm['build_all']:.2f} |",
        f"| first chapter's first kernel: import, device, one matmul "
        f"(fresh process) | {fc[0]:.2f} ({fc[1]:.2f}) | {fw[0]:.2f} ({fw[1]:.2f}) |"])


def run_all():
    """Every kernel benchmark -> a dict of results (report.py prints them)."""
    import train_step

    res = {"machine": machine(), "blas": blas_info(), "load": [load_average()],
           "torch": getattr(torch_or_none(), "__version__", None),
           "matmul": bench_matmul(), "shapes": bench_matmul_shapes(),
           "weight_grads": bench_matmul_shapes(WEIGHT_GRADS, transpose_a=True),
           "decode": bench_matmul_shapes(DECODE),
           "attention": bench_attention(), "long": bench_long(),
           "attention_torch": bench_attention_torch()}
    if res["torch"]:
        res["train"], res["first_loss"] = train_step.compare()
        res["generate"], res["same_tokens"] = train_step.generation()
    res["build"] = bench_build()
    res["load"].append(load_average())
    return res


def tables(res):
    out = [f"Machine: {res['machine']}. numpy: {res['blas']}. "
           f"torch: {res['torch'] or 'not installed'}. At the start and the "
           f"end: {', '.join(res['load'])}.",
           "Matmul, float32 GFLOP/s (n x n @ n x n):", matmul_table(res["matmul"]),
           "Matmul at chapter 09's training shapes, GFLOP/s:",
           shapes_table(res["shapes"]),
           "Its weight gradients X^T @ G (X^T read in place by strides), and "
           "one token of KV-cache decoding, GFLOP/s:",
           shapes_table(res.get("weight_grads", []) + res.get("decode", [])),
           "Attention forward, B=1 H=8 d=64 causal: ms, and (in brackets) the "
           "peak process memory one call adds, MiB (naive: four kernels, "
           "the S x S weights stored):",
           attention_table(res["attention"], res["long"])]
    if res.get("attention_torch"):
        out += ["The fused kernel against torch SDPA, B=1 H=8 d=64 causal, ms:",
                torch_attention_table(res["attention_torch"])]
    if res.get("train"):
        import train_step
        out += ["Chapter 09's model (bench/train_step.py: a torch twin with the "
                "same weights; first losses "
                f"{res['first_loss']['netcl_lite']:.5f} and "
                f"{res['first_loss']['torch']:.5f}):",
                train_step.table(res["train"]),
                "KV-cache generation, one sequence, greedy, 56 new tokens: "
                + ", ".join(f"{k} {v:.0f} tokens/s" for k, v in
                            res["generate"].items())
                + f" ({res['same_tokens']} of 56 tokens identical)."]
    out += ["Kernel build (PoCL):", build_table(res["build"])]
    return "\n\n".join(out)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--memory"]:
        _memory_child(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1:2] == ["--build"]:
        _build_child()
    else:
        print(tables(run_all()))
