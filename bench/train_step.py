"""One training step of chapter 09's model, netcl_lite next to torch.

The torch twin below has the same shapes, the same initial weights (copied
from the netcl_lite model), RoPE on interleaved pairs, GQA, SwiGLU, RMSNorm,
AdamW with the chapter's two parameter groups and clipping at 1.0. Its first
loss must equal ours (checked), so the two time the same computation.

    python bench/train_step.py             # markdown table: ms per step
    python bench/train_step.py --profile   # where netcl_lite's step goes
    python bench/train_step.py --floor     # how fast the step could be here

``--profile`` counts kernel launches per step and sums OpenCL profiling
events per kernel (device time; the rest of the wall time is Python and
launch overhead), and prints the CPU time of the Python thread itself.

``--floor`` bounds the step from below on this machine: its matrix
products' FLOPs at the FMA peak that ``kernels/roofline.cl`` measures, and
the same products in numpy (its BLAS), next to torch's whole step. A goal
such as "0.6x torch's step" is out of reach where those products alone
take longer.
"""

import math
import os
import pathlib
import sys
import time

THREADS = int(os.environ.get("BENCH_THREADS", os.cpu_count() or 1))
os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", str(THREADS))
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(THREADS))

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

# chapter 09: V 1024, D 128, 2 layers, 4 query / 2 kv heads, S 64, batch 32
CONFIG = dict(vocab_size=1024, dim=128, n_layers=2, n_heads=4, n_kv_heads=2,
              max_seq_len=64, seed=0)
BATCH, SEQ = 32, 64
LR, BETAS, WD, CLIP = 3e-3, (0.9, 0.95), 0.1, 1.0


def batches(n, seed=0):
    rng = np.random.default_rng(seed)
    V = CONFIG["vocab_size"]
    return [(rng.integers(0, V, (BATCH, SEQ)).astype(np.int32),
             rng.integers(0, V, (BATCH, SEQ)).astype(np.int32))
            for _ in range(n)]


# --- netcl_lite -----------------------------------------------------------------
class Ours:
    def __init__(self, queue=None):
        import netcl_lite.autograd as ag
        from netcl_lite.core.device import manager
        from netcl_lite.nn import DecoderConfig, DecoderLM
        from netcl_lite.optim import AdamW, clip_grad_norm

        self.ag, self.clip = ag, clip_grad_norm
        self.queue = queue or manager.default("auto").queue
        self.model = DecoderLM(self.queue, DecoderConfig(**CONFIG))
        params = self.model.parameters()
        self.opt = AdamW(
            [{"params": [p for p in params if len(p.shape) == 2],
              "weight_decay": WD},
             {"params": [p for p in params if len(p.shape) == 1],
              "weight_decay": 0.0}], lr=LR, betas=BETAS)

    def step(self, x, y):
        with self.ag.Tape() as tape:
            loss = self.model.loss(x, y)
        self.opt.zero_grad()
        tape.backward(loss)
        self.clip(self.model.parameters(), max_norm=CLIP)
        self.opt.step()
        return float(loss.value.to_host())   # the chapter reads it every step


# --- torch ----------------------------------------------------------------------
def torch_model(ours):
    """The torch twin of DecoderLM, initialised with ``ours``'s weights."""
    import torch
    from torch import nn

    c = ours.model.config
    hd = c.dim // c.n_heads

    def param(node):
        return nn.Parameter(torch.from_numpy(node.value.to_host().copy()))

    def rope(x, offset=0):              # (B, n, S, hd), interleaved pairs
        S = x.shape[-2]
        i = torch.arange(hd // 2, dtype=torch.float64)
        theta = c.rope_base ** (-2 * i / hd)
        pos = torch.arange(offset, offset + S, dtype=torch.float64)
        ang = pos[:, None] * theta                                    # (S, hd/2)
        cos, sin = ang.cos().float(), ang.sin().float()
        x0, x1 = x[..., 0::2], x[..., 1::2]
        return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos],
                           -1).flatten(-2)

    def rms(x, w):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + c.norm_eps) * w

    class Block(nn.Module):
        def __init__(self, b):
            super().__init__()
            a, f = b.attn, b.ffn
            self.n1, self.n2 = param(b.attn_norm.weight), param(b.ffn_norm.weight)
            self.wq, self.wk, self.wv, self.wo = (param(w) for w in
                                                  (a.wq, a.wk, a.wv, a.wo))
            self.wg, self.wu, self.wd = (param(w) for w in
                                         (f.w_gate, f.w_up, f.w_down))

        def forward(self, x, cache=None, offset=0):
            B, S, _ = x.shape
            h = rms(x, self.n1)
            q = (h @ self.wq).view(B, S, c.n_heads, hd).transpose(1, 2)
            k = (h @ self.wk).view(B, S, c.n_kv_heads, hd).transpose(1, 2)
            v = (h @ self.wv).view(B, S, c.n_kv_heads, hd).transpose(1, 2)
            q, k = rope(q, offset), rope(k, offset)
            if cache is not None:          # a list [k, v] per layer, or []
                if cache:
                    k = torch.cat([cache[0], k], -2)
                    v = torch.cat([cache[1], v], -2)
                cache[:] = [k, v]
            # causal with a cache: query i sees keys up to offset + i
            mask = None if offset == 0 else torch.ones(
                S, k.shape[-2], dtype=torch.bool).tril(offset)
            o = nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, is_causal=offset == 0,
                enable_gqa=True)
            x = x + o.transpose(1, 2).reshape(B, S, c.dim) @ self.wo
            h = rms(x, self.n2)
            return x + (nn.functional.silu(h @ self.wg) * (h @ self.wu)) @ self.wd

    class Twin(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.emb = param(m.tok_emb.weight)
            self.blocks = nn.ModuleList(Block(b) for b in m.blocks)
            self.norm, self.head = param(m.norm.weight), param(m.head.weight)

        def forward(self, ids, caches=None, offset=0):
            x = self.emb[ids]
            for i, b in enumerate(self.blocks):
                x = b(x, None if caches is None else caches[i], offset)
            return rms(x, self.norm) @ self.head

        @torch.no_grad()
        def generate(self, prompt, max_new_tokens):
            """Greedy decoding with a KV cache: the list of new ids."""
            caches = [[] for _ in self.blocks]
            ids, offset, new = torch.tensor([prompt]), 0, []
            for _ in range(max_new_tokens):
                logits = self(ids, caches, offset)[0, -1]
                offset += ids.shape[1]
                new.append(int(logits.argmax()))
                ids = torch.tensor([[new[-1]]])
            return new

    return Twin(ours.model)


class Torch:
    def __init__(self, ours):
        import torch
        torch.set_num_threads(THREADS)
        self.torch = torch
        self.model = torch_model(ours)
        params = list(self.model.parameters())
        self.opt = torch.optim.AdamW(
            [{"params": [p for p in params if p.dim() == 2], "weight_decay": WD},
             {"params": [p for p in params if p.dim() == 1],
              "weight_decay": 0.0}], lr=LR, betas=BETAS, eps=1e-8)

    def step(self, x, y):
        torch = self.torch
        x, y = torch.from_numpy(x).long(), torch.from_numpy(y).long()
        logits = self.model(x)
        loss = torch.nn.functional.cross_entropy(
            logits.view(-1, logits.shape[-1]), y.view(-1))
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), CLIP)
        self.opt.step()
        return float(loss.detach())


# --- timing ---------------------------------------------------------------------
def compare(steps=12, settle=0.25, clock=time.perf_counter):
    """{name: ms per step, best of ``steps``}, the two alternating in pairs,
    and each side's first loss (they must agree: same model, same batch).
    ``clock=time.process_time`` counts the process's CPU time instead of the
    wall clock (PoCL's worker threads included): on a loaded machine that
    leaves out the time spent waiting for a core."""
    ours = Ours()
    fns = {"netcl_lite": ours.step}
    first = {"netcl_lite": ours.step(*batches(1)[0])}
    try:
        twin = Torch(Ours())          # a fresh model: same seed, same weights
        fns["torch"] = twin.step
        first["torch"] = twin.step(*batches(1)[0])
    except ImportError:
        pass
    if "torch" in first and not math.isclose(first["netcl_lite"], first["torch"],
                                             rel_tol=1e-4):
        raise AssertionError(f"the twins disagree: first losses {first}")
    best = {k: math.inf for k in fns}
    data = batches(steps, seed=1)
    for x, y in data:
        for name, fn in fns.items():
            time.sleep(settle)        # let the other library's threads park
            fn(x, y)                  # wake the thread pools
            t0 = clock()
            fn(x, y)
            best[name] = min(best[name], clock() - t0)
    return {k: v * 1e3 for k, v in best.items()}, first


def generation(prompt_len=8, new_tokens=56, rounds=3, settle=0.25):
    """KV-cache generation, one sequence, greedy: tokens/s (best of rounds,
    alternating), and how many of the tokens the two libraries agree on."""
    ours = Ours()
    twin = Torch(Ours()).model
    prompt = batches(1)[0][0][0, :prompt_len].tolist()
    fns = {"netcl_lite": lambda: ours.model.generate(
               prompt, new_tokens, temperature=0.0, use_cache=True),
           "torch": lambda: twin.generate(prompt, new_tokens)}
    best, got = {k: math.inf for k in fns}, {}
    for _ in range(rounds):
        for name, fn in fns.items():
            time.sleep(settle)
            t0 = time.perf_counter()
            got[name] = fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    same = sum(a == b for a, b in zip(got["netcl_lite"], got["torch"]))
    return {k: new_tokens / v for k, v in best.items()}, same


def table(ms):
    tok = BATCH * SEQ
    lines = ["| one training step (chapter 09's model, B 32, S 64) | ms | "
             "tokens/s |", "|---|---|---|"]
    for k, v in ms.items():
        lines.append(f"| {k} | {v:.1f} | {tok / v * 1e3:,.0f} |")
    if "torch" in ms:
        lines.append(f"| netcl_lite / torch (time) | "
                     f"{ms['netcl_lite'] / ms['torch']:.2f} | |")
    return "\n".join(lines)


# --- profile --------------------------------------------------------------------
def profile(steps=6):
    """Launches and device time per kernel, and host reads, per step."""
    import pyopencl as cl
    from netcl_lite.core import program
    from netcl_lite.core.device import manager

    dev = manager.default("auto")
    queue = cl.CommandQueue(
        dev.context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    ours = Ours(queue)
    events = []
    kernel_call = cl.Kernel.__call__

    def timed(self, *args, **kw):     # keep each launch's event
        ev = kernel_call(self, *args, **kw)
        events.append((self.function_name, ev))
        return ev

    reads = [0]
    enqueue_copy = cl.enqueue_copy

    def counted(q, dest, src, **kw):
        if isinstance(dest, np.ndarray):
            reads[0] += 1
        return enqueue_copy(q, dest, src, **kw)

    data = batches(steps + 1)
    ours.step(*data[0])               # compile, allocate
    cl.Kernel.__call__, cl.enqueue_copy = timed, counted
    try:
        t0, c0 = time.perf_counter(), time.thread_time()
        for x, y in data[1:]:
            ours.step(x, y)
        wall = (time.perf_counter() - t0) / steps
        host = (time.thread_time() - c0) / steps   # Python + enqueue, this thread
    finally:
        cl.Kernel.__call__, cl.enqueue_copy = kernel_call, enqueue_copy
    queue.finish()
    # each launch's device time, the minimum over the steps (the same launch
    # sequence repeats every step): load on a shared machine only adds time
    n = len(events) // steps
    per = {}
    for i in range(n):
        name = events[i][0]
        t = min((events[i + s * n][1].profile.end -
                 events[i + s * n][1].profile.start) * 1e-6 for s in range(steps))
        count, total = per.get(name, (0, 0.0))
        per[name] = (count + 1, total + t)
    total = sum(t for _, t in per.values())
    print(f"wall {wall * 1e3:.1f} ms per step; device time {total:.1f} ms "
          f"(per launch, the best of {steps} steps) in {n} launches; "
          f"{reads[0] / steps:.0f} host reads; the Python thread's own CPU "
          f"time {host * 1e3:.1f} ms (building and enqueueing the launches)")
    print("| kernel | launches per step | ms per step |\n|---|---|---|")
    for name, (count, t) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        print(f"| {name} | {count} | {t:.2f} |")


# --- floor ----------------------------------------------------------------------
def products(ours, x, y):
    """[(batch, M, N, K), ...]: every matrix product one step launches."""
    import pyopencl as cl
    found = []
    kernel_call = cl.Kernel.__call__

    def seen(kernel, queue, global_size, local_size, *args, **kw):
        if kernel.function_name.startswith("matmul_") and "pack" not in \
                kernel.function_name:   # A, B, C, then batch, M, N, K
            found.append(tuple(int(np.asarray(a)) for a in args[3:7]))
        return kernel_call(kernel, queue, global_size, local_size, *args, **kw)

    ours.step(x, y)                   # compile, allocate
    cl.Kernel.__call__ = seen
    try:
        ours.step(x, y)
    finally:
        cl.Kernel.__call__ = kernel_call
    return found


def floor(rounds=3, repeats=7):
    """Markdown: the step's products (GFLOP), their time at the measured
    FMA peak and in numpy, and the two libraries' whole steps."""
    from netcl_lite.core import roofline
    from netcl_lite.core.device import manager

    ours = Ours()
    x, y = batches(1)[0]
    shapes = products(ours, x, y)
    flops = sum(2 * b * m * n * k for b, m, n, k in shapes)
    rng = np.random.default_rng(0)
    pairs = [(rng.standard_normal((b, m, k), np.float32),
              rng.standard_normal((b, k, n), np.float32))
             for b, m, n, k in shapes]

    def numpy_products():
        t0 = time.perf_counter()
        for a, b in pairs:
            np.matmul(a, b)
        return time.perf_counter() - t0

    queue = roofline.profiling_queue(manager.default("auto").queue)
    timed = Ours(queue)           # the same model, its launches timed

    def our_products():           # device time of matmul_*, packing included
        kernels = roofline.profile(queue, lambda: timed.step(x, y), steps=3)
        return sum(k.seconds for k in kernels if k.name.startswith("matmul_"))

    best = dict(peak=0.0, numpy=math.inf, ours=math.inf)
    steps = {}
    for _ in range(rounds):       # the machine's speed drifts: interleave
        best["peak"] = max(best["peak"], roofline.peak_flops(queue)[0])
        best["ours"] = min(best["ours"], our_products())
        best["numpy"] = min(best["numpy"],
                            min(numpy_products() for _ in range(repeats)))
        ms, _ = compare(steps=repeats)
        for k, v in ms.items():
            steps[k] = min(steps.get(k, math.inf), v)
    rows = [f"| the step's {len(shapes)} matrix products, {flops / 1e9:.2f} "
            f"GFLOP, at the FMA peak ({best['peak'] / 1e9:.0f} GFLOP/s) | "
            f"{flops / best['peak'] * 1e3:.1f} |",
            f"| the same products in numpy | {best['numpy'] * 1e3:.1f} |",
            f"| the same products in netcl_lite (device time, packing "
            f"included) | {best['ours'] * 1e3:.1f} |"]
    rows += [f"| {k}, the whole step | {v:.1f} |" for k, v in steps.items()]
    if "torch" in steps:
        rows.append(f"| 0.6 x torch's step | {0.6 * steps['torch']:.1f} |")
    return "\n".join(["| best of %d rounds | ms |" % rounds, "|---|---|", *rows])


if __name__ == "__main__":
    if "--profile" in sys.argv:
        profile()
    elif "--floor" in sys.argv:
        print(floor())
    elif "--generate" in sys.argv:
        print(generation())
    elif "--cpu" in sys.argv:
        ms, first = compare(clock=time.process_time)
        print("(CPU time per step)\n" + table(ms))
    else:
        ms, first = compare()
        print(table(ms))
