"""The same benchmarks on each OpenCL implementation found here.

    python bench/implementations.py [--quick]

For every implementation that builds a kernel on this machine (pip's PoCL,
Debian's PoCL, Intel's CPU runtime; selected by ``NETCL_PLATFORM`` in a
child process each, so one cannot warm the other), it measures:

- matmul n x n @ n x n in GFLOP/s, with numpy's in the same child;
- the fused attention forward at chapter 09's head shape, in ms;
- one training step of chapter 09's model (bench/train_step.py), in ms.

It prints one markdown table, a column per implementation, each with its
speed relative to the first column.
``make bench`` runs it after the main report (bench/report.py).
"""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
# NETCL_PLATFORM values, and what the table calls them
NAMES = (("pocl 3.0", "PoCL 3.0 (pip)"), ("pocl 3.1", "PoCL 3.1 (Debian)"),
         ("pocl 7", "PoCL 7 (conda-forge)"), ("intel", "Intel OpenCL (pip)"))

CHILD = r"""
import json, sys, time
sys.path.insert(0, "bench")
import numpy as np
import kernels, train_step
from netcl_lite.core.device import manager
quick = sys.argv[1] == "1"
dev = manager.default("auto")
out = {"device": f"{dev.name} on {dev.platform}"}
sizes = [1024] if quick else [1024, 2048]
for row in kernels.bench_matmul(sizes):
    out[f"matmul n={row['n']}"] = row["netcl_lite"]
    out[f"numpy n={row['n']}"] = row["numpy"]
S = 1024 if quick else 2048
run = kernels.attention_runner("fused", S)
run()
best = kernels.interleaved_best({"fused": run}, repeats=3)["fused"]
out[f"attention S={S}"] = best * 1e3
train_step.Torch = None        # ours only: torch is timed in bench/report.py
ours = train_step.Ours()
x, y = train_step.batches(1)[0]
ours.step(x, y)
steps = []
for x, y in train_step.batches(4 if quick else 8, seed=1):
    t0 = time.perf_counter(); ours.step(x, y); steps.append(time.perf_counter() - t0)
out["train step"] = min(steps) * 1e3
print("RESULT " + json.dumps(out))
"""

# row label -> (unit, higher is better)
ROWS = (("matmul n=1024", "GFLOP/s", True), ("matmul n=2048", "GFLOP/s", True),
        ("numpy n=1024", "GFLOP/s (numpy, same run)", True),
        ("numpy n=2048", "GFLOP/s (numpy, same run)", True),
        ("attention S=1024", "ms", False), ("attention S=2048", "ms", False),
        ("train step", "ms", False))


def works(wanted):
    """Does NETCL_PLATFORM=wanted give a device that builds? (a child)"""
    env = {**os.environ, "NETCL_PLATFORM": wanted}
    done = subprocess.run([sys.executable, "-m", "netcl_lite.doctor",
                           "--check"], env=env, capture_output=True,
                          text=True, cwd=ROOT)
    return done.returncode == 0 and wanted.lower().split()[0] in \
        done.stdout.lower().replace("portable computing language", "pocl")


def measure(wanted, quick):
    env = {**os.environ, "NETCL_PLATFORM": wanted}
    done = subprocess.run([sys.executable, "-c", CHILD, "1" if quick else "0"],
                          env=env, capture_output=True, text=True, cwd=ROOT)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"NETCL_PLATFORM={wanted!r}: {done.stderr[-1500:]}")


def table(results):
    """Markdown: a column per implementation, ratios to the first."""
    names = list(results)
    head = "| | " + " | ".join(names) + " |"
    lines = [head, "|---" * (len(names) + 1) + "|",
             "| device | " + " | ".join(results[n]["device"] for n in names)
             + " |"]
    first = results[names[0]]
    for key, unit, higher in ROWS:
        if key not in first:
            continue
        cells = []
        for n in names:
            value = results[n].get(key)
            if value is None:
                cells.append("")
                continue
            ratio = value / first[key]
            if n == names[0] or key.startswith("numpy"):
                cells.append(f"{value:.1f}")
            else:
                speed = ratio if higher else 1 / ratio
                cells.append(f"{value:.1f} ({speed:.2f}x the speed)")
        lines.append(f"| {key}, {unit} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv):
    quick = "--quick" in argv
    results = {}
    for wanted, name in NAMES:
        if works(wanted):
            print(f"measuring {name} ...", file=sys.stderr)
            results[name] = measure(wanted, quick)
    if not results:
        print("no implementation here builds a kernel: see "
              "python -m netcl_lite.doctor")
        return 1
    print("### The same work on each OpenCL implementation\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
