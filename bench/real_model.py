"""A real model end to end (chapter 14): SmolLM2-135M-Instruct from its GGUF
file, prefill and decoding, ours against llama.cpp.

One process, one table, on the same file and threads (``BENCH_THREADS``,
default 2, for PoCL's worker threads and llama.cpp's alike):

- prefill: a forward of ``--prompt`` (512) random tokens with a KVCache,
  the last position's logits read back; tokens/s;
- decoding: ``--decode`` (128) steps after that prompt, one token each,
  logits read back every step; tokens/s;
- rows: ours with the file's quantised weights (``QuantizedDecoder``),
  ours on float32 weights dequantised from the same file
  (``FusedDecoder``), and llama.cpp through ``llama_cpp`` (its column is
  skipped, with a line saying so, where it does not import);
- the ceiling: a decoding step reads every weight matrix once, so the
  bytes it reads over the measured bandwidth (numpy summing 1 GB, and the
  device's own copy) bound the tokens/s;
- the ratios ours / llama.cpp, from the same run.

The systems are timed in turn, round after round, and each keeps its best
round: a shared machine only ever adds time, and llama.cpp's threads spin
while they wait, so they suffer from other load more than ours do. The
load average is printed before and after.

``--profile``: the device time of each kernel of one quantised decoding
step after ``--prompt`` tokens (OpenCL profiling events, the best of 5
steps), next to the step's wall time.

``--memory`` (alone, a fresh process): VmRSS after imports and the device,
then after ``from_gguf`` and ``generate(max_new_tokens=32)`` with the
file's memory map released; the difference and VmHWM.

    python bench/real_model.py [--rounds 3] [--prompt 512] [--decode 128]
    python bench/real_model.py --profile [--prompt 512]
    python bench/real_model.py --memory [--path FILE.gguf]
"""

import argparse
import dataclasses
import gc
import os
import pathlib
import sys
import time

THREADS = int(os.environ.get("BENCH_THREADS", 2))
os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", str(THREADS))
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(THREADS))

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numpy as np  # noqa: E402

from netcl_lite.core.device import manager  # noqa: E402
from netcl_lite.core.roofline import (copy_bandwidth, profile,  # noqa: E402
                                      profiling_queue)
from netcl_lite.nn import decode  # noqa: E402
from netcl_lite.nn.gguf_loader import read_gguf  # noqa: E402
from llama_cpp_import import import_llama_cpp  # noqa: E402
from netcl_lite.nn.hub import fetch  # noqa: E402
from netcl_lite.nn.kv_cache import KVCache  # noqa: E402
from netcl_lite.nn.model import DecoderLM  # noqa: E402
from netcl_lite.nn.weights import FileTensor  # noqa: E402

SETTLE = 0.25   # s between systems: spinning threads of the last one park
MODEL = "SmolLM2-135M-Instruct"


def status_mib(key):
    """A line of /proc/self/status (VmRSS, VmHWM) in MiB."""
    with open("/proc/self/status", encoding="ascii") as f:
        line = next(line for line in f if line.startswith(key + ":"))
    return int(line.split()[1]) / 1024


def float_model(path, queue):
    """The same file with every matrix dequantised to float32 on load."""
    found = read_gguf(path)
    for name, t in found.tensors.items():
        found.tensors[name] = dataclasses.replace(
            t, qtype="F32", data=lambda t=t: t.floats())
    return DecoderLM._from_file(found, queue)   # the loaders' shared door


def weight_bytes(model):
    """Bytes a decoding step reads: every matrix once (the head, tied or
    not), the embedding's one row and the norms aside."""
    from netcl_lite.nn.quantized import QuantizedLinear
    total = 0
    for b in model.blocks:
        for m in (b.attn.wq, b.attn.wk, b.attn.wv, b.attn.wo, b.ffn.w_gate,
                  b.ffn.w_up, b.ffn.w_down):
            total += m.weight.nbytes if isinstance(m, QuantizedLinear) \
                else 4 * m.value.size
    head = model.head
    total += head.weight.nbytes if isinstance(head, QuantizedLinear) else \
        4 * model.config.vocab_size * model.config.dim
    return total


class Ours:
    """Prefill and decoding on our kernels, as ``generate`` runs them."""

    def __init__(self, model, ids, steps):
        self.model, self.ids, self.steps = model, ids, steps
        self.cache = None

    def prefill(self):
        self.cache = KVCache(len(self.model.blocks))
        self.model.forward(self.ids[None], self.cache,
                           last_only=True).value.to_host()

    def decode(self):
        P = self.ids.size
        step = decode.decoder_for(self.model, 1, positions=P + self.steps)
        step.start(self.cache)
        for i in range(self.steps):
            step.step(self.ids[i:i + 1])


class Llama:
    def __init__(self, llm, ids, steps):
        self.llm, self.ids, self.steps = llm, [int(i) for i in ids], steps

    def prefill(self):
        self.llm.reset()
        self.llm.eval(self.ids)

    def decode(self):
        for i in range(self.steps):
            self.llm.eval([self.ids[i]])


def llama_or_none(path, prompt, steps):
    """llama.cpp on the file, or None with the reason printed."""
    llama_cpp = import_llama_cpp()
    if llama_cpp is None:
        print("llama.cpp: skipped, llama_cpp does not import (make bench "
              "installs it from tools/llama_cpp_wheel.py when it can build)")
        return None
    llm = llama_cpp.Llama(model_path=str(path), n_threads=THREADS,
                          n_threads_batch=THREADS, n_batch=prompt,
                          n_ctx=prompt + steps + 8, verbose=False)
    return llama_cpp.__version__, llm


def best_rounds(systems, rounds):
    """{name: (best prefill s, best decode s)}, the systems in turn."""
    best = {name: [float("inf")] * 2 for name in systems}
    for r in range(rounds + 1):               # round 0 builds and warms up
        for name, s in systems.items():
            for i, run in enumerate((s.prefill, s.decode)):
                time.sleep(SETTLE)
                start = time.perf_counter()
                run()
                if r:
                    best[name][i] = min(best[name][i],
                                        time.perf_counter() - start)
    return best


def numpy_bandwidth(nbytes=1 << 30, repeats=3):
    """Bytes/s numpy reads summing a float32 array of nbytes."""
    a = np.ones(nbytes // 4, np.float32)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a.sum()
        best = min(best, time.perf_counter() - start)
    return nbytes / best


def bench(args):
    device = manager.default("cpu")
    path = fetch(MODEL)
    print(f"# {MODEL} ({path.name}) on {device.name}, {device.platform}; "
          f"{THREADS} threads; load average {os.getloadavg()[0]:.1f}\n")
    ids = np.random.default_rng(0).integers(100, 49000, args.prompt).astype(
        np.int32)                                            # (P,)
    quantised = DecoderLM.from_gguf(path, device.queue)
    floats = float_model(path, device.queue)
    systems = {"ours, quantised": Ours(quantised, ids, args.decode),
               "ours, float32": Ours(floats, ids, args.decode)}
    llama = llama_or_none(path, args.prompt, args.decode)
    if llama:
        systems[f"llama.cpp {llama[0]}"] = Llama(llama[1], ids, args.decode)
    best = best_rounds(systems, args.rounds)
    print(f"| {THREADS} threads | prefill {args.prompt} tokens/s | decode "
          f"tokens/s (after {args.prompt}) |")
    print("|---|---|---|")
    rates = {}
    for name, (pre, dec) in best.items():
        rates[name] = (args.prompt / pre, args.decode / dec)
        print(f"| {name} | {rates[name][0]:.0f} | {rates[name][1]:.1f} |")
    bw_np = numpy_bandwidth()
    bw_cl = copy_bandwidth(device.queue)
    print(f"\nbandwidth: numpy sum {bw_np / 1e9:.1f} GB/s, device copy "
          f"{bw_cl / 1e9:.1f} GB/s")
    for name, model in (("quantised", quantised), ("float32", floats)):
        nbytes = weight_bytes(model)
        print(f"ceiling, {name}: {nbytes / 1e6:.0f} MB a token -> "
              f"{max(bw_np, bw_cl) / nbytes:.0f} tokens/s")
    anchor = next((n for n in rates if n.startswith("llama.cpp")), None)
    if anchor:
        for name in ("ours, quantised", "ours, float32"):
            pre, dec = (a / b for a, b in zip(rates[name], rates[anchor]))
            print(f"{name} / llama.cpp: prefill {pre:.2f}x, decoding "
                  f"{dec:.2f}x")
        pre, dec = (a / b for a, b in zip(rates["ours, quantised"],
                                          rates[anchor]))
        print(f"goals (decoding >= 0.5x, prefill >= 1.0x): decoding "
              f"{'met' if dec >= 0.5 else 'MISSED'}, prefill "
              f"{'met' if pre >= 1.0 else 'MISSED'}")
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


def profile_step(prompt, steps=5):
    """Each kernel's device time in one decoding step after ``prompt``
    tokens, and the wall time of a step."""
    queue = profiling_queue(manager.default("cpu").queue)
    model = DecoderLM.from_gguf(fetch(MODEL), queue)
    ids = np.random.default_rng(0).integers(100, 49000, (1, prompt)).astype(
        np.int32)                                            # (1, P)
    cache = KVCache(len(model.blocks))
    model.forward(ids, cache, last_only=True).value.to_host()
    step = decode.decoder_for(model, 1, positions=prompt + 4 * steps)
    step.start(cache)
    found = profile(queue, lambda: step.step([ids[0, 0]]), steps=steps)
    wall = float("inf")
    for _ in range(steps):
        start = time.perf_counter()
        step.step([ids[0, 0]])
        wall = min(wall, time.perf_counter() - start)
    total = sum(k.seconds for k in found)
    print(f"# one decoding step after {prompt} tokens ({type(step).__name__}); "
          f"load average {os.getloadavg()[0]:.1f}\n")
    print("| kernel | launches | device ms | share |")
    print("|---|---|---|---|")
    for k in found:
        print(f"| {k.name} | {k.launches} | {k.seconds * 1e3:.2f} | "
              f"{k.seconds / total:.0%} |")
    print(f"\ndevice time {total * 1e3:.1f} ms in "
          f"{sum(k.launches for k in found)} launches; wall {wall * 1e3:.1f} ms "
          f"a step (best of {steps})")


def memory(path, max_new_tokens=32):
    """VmRSS before and after loading and generating, in this process;
    returns the growth in MB (10^6 bytes), the unit of the goal."""
    device = manager.default("cpu")
    gc.collect()
    base = status_mib("VmRSS")
    print(f"after imports and the device: VmRSS {base:.0f} MiB")
    model = DecoderLM.from_gguf(path, device.queue)
    new = model.generate([1, 9690, 314, 253], max_new_tokens,
                         temperature=0.0, stop_ids=())
    gc.collect()
    maps = [line for line in open("/proc/self/maps", encoding="ascii")
            if path.name in line]
    rss = status_mib("VmRSS")
    grown = (rss - base) * 2**20 / 1e6
    print(f"after from_gguf and generate({max_new_tokens} tokens, "
          f"{len(new)} made): VmRSS {rss:.0f} MiB (+{rss - base:.0f} MiB, "
          f"+{grown:.0f} MB), VmHWM {status_mib('VmHWM'):.0f} MiB; the file "
          f"mapped: {'yes' if maps else 'no'}")
    return grown


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--prompt", type=int, default=512)
    parser.add_argument("--decode", type=int, default=128)
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--path", help="the GGUF file (default: the pinned "
                        "SmolLM2, fetched)")
    args = parser.parse_args()
    if args.memory:
        memory(pathlib.Path(args.path) if args.path else fetch(MODEL))
    elif args.profile:
        profile_step(args.prompt)
    else:
        bench(args)


if __name__ == "__main__":
    main()
