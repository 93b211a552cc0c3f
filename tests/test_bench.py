"""The benchmark scripts' parts that run in a child process, run once here.

Timings are not checked: shared machines are too noisy for timed tests.
These catch a script that would crash after minutes of measuring, as
`bench/kernels.py --build` did once the kernel cache took a queue instead
of a context.
"""

import ast
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_child(args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, *args], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout.strip().splitlines()[-1]


def test_the_build_child_builds_every_kernel_file():
    out = json.loads(run_child(["bench/kernels.py", "--build"]))
    files = [p for p in (ROOT / "kernels").glob("*.cl")
             if "__kernel" in p.read_text()]
    assert out["files"] == len(files) > 10
    assert out["build_all"] > 0


def test_the_first_kernel_child_prints_wall_and_cpu_seconds():
    # read from the script, not imported: importing it sets thread variables
    tree = ast.parse((ROOT / "bench" / "kernels.py").read_text(encoding="utf-8"))
    snippet = next(node.value.value for node in tree.body
                   if isinstance(node, ast.Assign)
                   and getattr(node.targets[0], "id", "") == "_FIRST_KERNEL")
    wall, cpu = map(float, run_child(["-c", snippet]).split())
    assert wall > 0 and cpu > 0


def test_the_floor_finds_every_product_of_a_training_step():
    # chapter 09's model: per layer q and o (D x D), k and v (D x D/2 with
    # GQA), SwiGLU's gate and up (D x F) and down (F x D); the head D x V.
    # The backward runs two products per forward one: 3x the forward FLOPs.
    snippet = ("import sys; sys.path.insert(0, 'bench'); import train_step as t\n"
               "s = t.products(t.Ours(), *t.batches(1)[0])\n"
               "print(len(s), sum(2 * b * m * n * k for b, m, n, k in s))")
    count, flops = map(int, run_child(["-c", snippet]).split())
    T, D, F, V, layers = 32 * 64, 128, 352, 1024, 2
    per_layer = D * D + 2 * D * (D // 2) + D * D + 2 * D * F + F * D
    forward = 2 * T * (layers * per_layer + D * V)
    assert (count, flops) == (45, 3 * forward)


def test_the_real_model_profile_lists_a_decoding_steps_kernels(smollm2_path):
    """bench/real_model.py --profile: SmolLM2's quantised decoding step,
    5 launches a layer plus 4, every kernel named with its device time."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "bench/real_model.py", "--profile",
                          "--prompt", "16"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    out = res.stdout
    assert "(QuantizedDecoder)" in out
    for name in ("qdecode_qkv", "qdecode_attention", "qdecode_residual",
                 "qdecode_swiglu", "qdecode_matvec"):
        assert f"| {name} |" in out, out
    assert " in 154 launches; wall " in out, out      # 5 x 30 + 4
