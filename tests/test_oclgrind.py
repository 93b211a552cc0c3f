"""The kernels on a second device that checks every access: Oclgrind.

Oclgrind (Debian's ``oclgrind`` package) simulates an OpenCL device, which
reports itself as a GPU, and checks each memory access and each interaction
between work-items: out-of-bounds reads and writes, data races (with
``OCLGRIND_DATA_RACES=1``) and barriers that only some work-items reach.
This is where a kernel that assumes a CPU (work-group size, local memory)
gets caught before a reader with a GPU finds it.

The tests marked ``oclgrind`` (listed in tests/oclgrind.txt, small shapes)
run again in a child pytest that sees Oclgrind as its GPU:

* pyopencl's ICD loader finds Oclgrind through ``OCL_ICD_VENDORS``, a folder
  holding one ``.icd`` file whose line names ``liboclgrind-rt-icd.so``;
* ``NETCL_PLATFORM=oclgrind`` selects it by name (a simulator is never
  chosen otherwise), with no change to the library;
* ``NETCL_FAIL_ON_OCLGRIND=1`` makes any report on stderr fail its test
  (tests/conftest.py).

Oclgrind interprets kernels about 1000x slower than PoCL, so the subset is
small (under two minutes). Without Oclgrind installed this test skips,
unless ``OCLGRIND_REQUIRE=1`` (set by .ci/run, which installs it).
"""

import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

from oclgrind_subset import OCLGRIND_REPORT, oclgrind_subset

ROOT = pathlib.Path(__file__).resolve().parents[1]
ICD_NAME = "liboclgrind-rt-icd.so"


def oclgrind_library():
    """liboclgrind-rt-icd.so: $OCLGRIND_ICD_LIB, or beside the oclgrind
    program (Debian: <prefix>/bin/oclgrind, <prefix>/lib/oclgrind/...)."""
    if os.environ.get("OCLGRIND_ICD_LIB"):
        return pathlib.Path(os.environ["OCLGRIND_ICD_LIB"])
    program = shutil.which("oclgrind")
    if program is None:
        return None
    prefix = pathlib.Path(program).resolve().parents[1]
    for folder in ("lib/oclgrind", "lib", "lib/x86_64-linux-gnu",
                   "lib/aarch64-linux-gnu", "lib64"):
        if (prefix / folder / ICD_NAME).is_file():
            return prefix / folder / ICD_NAME
    return None


@pytest.fixture(scope="module")
def oclgrind_env(tmp_path_factory):
    library = oclgrind_library()
    if library is None or not library.is_file():
        message = ("Oclgrind is not installed (apt-get install oclgrind), or "
                   f"{ICD_NAME} was not found beside the oclgrind program")
        if os.environ.get("OCLGRIND_REQUIRE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    vendors = tmp_path_factory.mktemp("icd")
    (vendors / "oclgrind.icd").write_text(f"{library}\n")
    return {**os.environ, "OCL_ICD_VENDORS": str(vendors),
            "NETCL_PLATFORM": "oclgrind", "OCLGRIND_DATA_RACES": "1",
            "NETCL_FAIL_ON_OCLGRIND": "1"}


def test_the_child_sees_oclgrind(oclgrind_env):
    code = ("from netcl_lite.core.device import manager; "
            "print(manager.default('auto').name)")
    done = subprocess.run([sys.executable, "-c", code], env=oclgrind_env,
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert "Oclgrind" in done.stdout, (done.stdout, done.stderr[-2000:])


# A kernel that writes one element past its buffer, to show that a report
# fails the test (the fixture in tests/conftest.py), here and only here.
OFF_BY_ONE = """
import numpy as np
import pyopencl as cl
from netcl_lite.core.device import manager

SOURCE = ("__kernel void off_by_one(__global float *x) "
          "{ x[get_global_id(0) + 1] = 1; }")


def test_off_by_one():
    queue = manager.default("auto").queue
    kernel = cl.Program(queue.context, SOURCE).build().off_by_one
    buffer = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 16)
    kernel(queue, (4,), (4,), buffer)
    queue.finish()
"""


def test_a_report_fails_the_test(oclgrind_env, tmp_path):
    for name in ("conftest.py", "oclgrind_subset.py", "oclgrind.txt"):
        (tmp_path / name).write_text((ROOT / "tests" / name).read_text())
    (tmp_path / "test_bad.py").write_text(OFF_BY_ONE)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(tmp_path / "test_bad.py")],
        env=oclgrind_env, capture_output=True, text=True, timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stdout[-3000:]
    assert "Oclgrind reported" in done.stdout, done.stdout[-3000:]
    assert "Invalid write of size 4" in done.stdout, done.stdout[-3000:]
    assert "Kernel: off_by_one" in done.stdout, done.stdout[-3000:]


def test_marked_subset_runs_clean_on_oclgrind(oclgrind_env):
    files = sorted({entry.split("::")[0] for entry in oclgrind_subset()})
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "oclgrind",
         "-p", "no:cacheprovider", *files],
        env=oclgrind_env, capture_output=True, text=True, timeout=900, cwd=ROOT,
    )
    seconds = time.perf_counter() - start
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"exit code {done.returncode}:\n{output[-8000:]}"
    assert not OCLGRIND_REPORT.search(output), output[-8000:]
    assert " passed" in done.stdout and " deselected" in done.stdout, output
    print(f"Oclgrind subset: {done.stdout.strip().splitlines()[-1]} "
          f"({seconds:.0f} s)")


def test_every_listed_test_exists():
    """A renamed test must not silently drop out of tests/oclgrind.txt."""
    listed = oclgrind_subset()
    files = sorted({entry.split("::")[0] for entry in listed})
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q",
         "-p", "no:cacheprovider", *files],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    missing = [entry for entry in listed
               if not any(i.startswith(entry) for i in ids)]
    assert not missing, f"tests/oclgrind.txt names no test here: {missing}"
