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


def test_the_course_table_times_nbval_and_finds_slow_cells(tmp_path):
    """bench/course.py: a two-cell notebook passes nbval with its CPU seconds
    counted, and pytest's --durations lines map to stored cells and bars."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import course
    finally:
        sys.path.remove(str(ROOT / "bench"))
    bar = {"name": "stderr", "output_type": "stream",
           "text": "\rruns:   0%|     | 0/3 [00:00<?, ?it/s]"
                   "\rruns: 100%|#####| 3/3 [00:30<00:00, 10.0s/it]\n"}
    cells = [{"cell_type": "code", "execution_count": 1, "id": "a",
              "metadata": {}, "source": "print(6 * 7)",
              "outputs": [{"name": "stdout", "output_type": "stream",
                           "text": "42\n"}]},
             {"cell_type": "markdown", "id": "b", "metadata": {}, "source": "x"},
             {"cell_type": "code", "execution_count": 2, "id": "c",
              "metadata": {}, "source": "import sys\n"
              "print('\\rruns: 100%|#####| 3/3', file=sys.stderr)",
              "outputs": [bar]}]
    nb = {"cells": cells, "metadata": {"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "chapters").mkdir()
    path = tmp_path / "chapters" / "00_tiny.ipynb"
    path.write_text(json.dumps(nb))
    for name in ("sanitize.cfg", "conftest.py"):      # as the course copies
        (tmp_path / "chapters" / name).write_text(
            (ROOT / "chapters" / name).read_text())
    passed, wall, cpu, slow = course.run_chapter(path, tmp_path, timeout=300)
    assert passed and wall > 0 and cpu > 0 and slow == []
    # two updates and one line end: one bar; none, or one line per update: not
    assert course.one_bar(cells[2]) and not course.one_bar(cells[0])
    many = {"outputs": [{**bar, "text": "runs: 50%|##| 1/2\nruns: 100%|#| 2/2\n"}]}
    assert not course.one_bar(many)
    report = "31.50s call     chapters/00_tiny.ipynb::Cell 1\n" \
             "25.00s call     chapters/00_tiny.ipynb::Cell 0\n"
    assert course.slow_cells(report, path) == [(0, 25.0, False), (1, 31.5, True)]
    text = course.table([("00_tiny.ipynb", True, 400.0, 300.0,
                          [(1, 31.5, True)])])
    assert "400.0 (over 6 min)" in text and "cell 1: 32 s, bar" in text
