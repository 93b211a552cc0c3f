"""The device choice on real OpenCL drivers, in child processes.

A PoCL that cannot compile is made on purpose: PoCL refuses the build
option that ``POCL_EXTRA_BUILD_FLAGS=-mcpu=generic`` adds to every build,
so each kernel build fails, as pip's PoCL 3.0 fails on AMD Zen 5 (with
"unknown target CPU 'generic'" there; tests/core/test_device_choice.py
checks that message's explanation).

The cases with Intel's runtime need the [intel] extra in this environment;
they skip without it, unless NETCL_REQUIRE_INTEL=1 (``make test-intel``).
"""

import os
import subprocess
import sys

import pytest

from netcl_lite.core import icd

BROKEN_POCL = {"POCL_EXTRA_BUILD_FLAGS": "-mcpu=generic"}
SMALL_MATMUL = (
    "import numpy as np\n"
    "import netcl_lite.functional as F\n"
    "from netcl_lite.core.device import manager\n"
    "from netcl_lite.core.tensor import Tensor\n"
    "dev = manager.default('auto')\n"
    "a = Tensor.from_host(dev.queue, np.arange(6.0).reshape(2, 3))\n"
    "b = Tensor.from_host(dev.queue, np.ones((3, 2)))\n"
    "print('platform:', dev.platform)\n"
    "print('product:', F.matmul(a, b).value.to_host().tolist())\n"
)


def child(code, env_extra, drop=("NETCL_PLATFORM", "NETCL_DEVICE",
                                 "OCL_ICD_VENDORS", "POCL_EXTRA_BUILD_FLAGS")):
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", code], env=env, text=True,
                          capture_output=True, timeout=300)


def needs_intel():
    if icd.intel_runtime() is None:
        if os.environ.get("NETCL_REQUIRE_INTEL") == "1":
            pytest.fail("Intel's runtime is not in this environment "
                        '(pip install -e ".[intel]")')
        pytest.skip("Intel's OpenCL runtime is not installed (the [intel] "
                    "extra)")


def only_pip_pocl(tmp_path):
    """OCL_ICD_VENDORS at an empty folder: the loader then lists only the
    PoCL bundled with pyopencl (and icd.prepare leaves it alone)."""
    empty = tmp_path / "no-vendors"
    empty.mkdir()
    return {"OCL_ICD_VENDORS": str(empty)}


def test_a_pocl_that_cannot_compile_gives_the_explained_error(tmp_path):
    done = child(SMALL_MATMUL, {**BROKEN_POCL, **only_pip_pocl(tmp_path)})
    assert done.returncode != 0
    err = done.stderr
    last = err.strip().splitlines()
    start = next(i for i, line in enumerate(last) if line.startswith(
        "RuntimeError: No OpenCL device here can build a kernel"))
    message = "\n".join(last[start:])
    assert "Portable Computing Language (OpenCL 3.0 PoCL" in message
    assert "Invalid build option: -mcpu=generic" in message
    assert "pocl-opencl-icd" in message and "netcl_lite[intel]" in message
    assert "python -m netcl_lite.doctor" in message
    # no raw build traceback: pyopencl's own exception never escapes
    assert "pyopencl._cl.RuntimeError" not in err
    assert "BUILD_PROGRAM_FAILURE" not in err


def test_the_doctor_check_fails_and_the_full_report_says_why(tmp_path):
    env = {**BROKEN_POCL, **only_pip_pocl(tmp_path)}
    check = child("from netcl_lite.doctor import main; "
                  "raise SystemExit(main(['--check']))", env)
    assert check.returncode == 1
    assert check.stdout.startswith("no working OpenCL device")
    report = child("from netcl_lite.doctor import main; "
                   "raise SystemExit(main([]))", env)
    assert report.returncode == 1
    assert "compiles        NO: Invalid build option" in report.stdout


def test_the_doctor_reports_platforms_the_choice_and_the_tile():
    done = child("from netcl_lite.doctor import main; "
                 "raise SystemExit(main([]))", {})
    assert done.returncode == 0, done.stdout + done.stderr
    for part in ["== environment", "pyopencl", "== platforms and devices",
                 "compiles        yes", "float vectors", "compute units",
                 "device the course uses", "why ", "== matmul tile",
                 "tile        TILE_M=", "cache       "]:
        assert part in done.stdout, part


def test_a_broken_pocl_listed_first_leaves_the_course_on_intel(tmp_path):
    needs_intel()
    # a fresh cache: the skip warning shows once per machine
    done = child(SMALL_MATMUL, {**BROKEN_POCL,
                                "XDG_CACHE_HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "platform: Intel(R) OpenCL" in done.stdout
    assert "product: [[3.0, 3.0], [12.0, 12.0]]" in done.stdout
    skipped = [line for line in done.stderr.splitlines()
               if "DeviceWarning: skipped Portable Computing Language" in line]
    assert skipped and all("-mcpu=generic" in line for line in skipped)


# Whether any platform that NETCL_PLATFORM selects builds and runs the test
# kernel here, asked of the probe itself (the doctor's "compiles" column)
ANY_COMPILES = (
    "import os\n"
    "from netcl_lite.core import device\n"
    "wanted = os.environ['NETCL_PLATFORM']\n"
    "pairs = device.candidates('auto', wanted)\n"
    "print('compiles:', any(device.probe(d)[0] is None for _, d in pairs))\n"
)


def picks(wanted, platform, env=()):
    """NETCL_PLATFORM=wanted in a child: the product on ``platform`` when
    one of the platforms it names compiles here, else the explained error
    that lists what was tried (pip's PoCL 3.0 on AMD Zen 5, with no other
    PoCL installed)."""
    env = {"NETCL_PLATFORM": wanted, **dict(env)}
    compiles = child(ANY_COMPILES, env)
    assert compiles.returncode == 0, compiles.stderr[-3000:]
    done = child(SMALL_MATMUL, env)
    if "compiles: True" in compiles.stdout:
        assert f"platform: {platform}" in done.stdout, done.stderr[-3000:]
        assert "product: [[3.0, 3.0], [12.0, 12.0]]" in done.stdout
        return True
    assert done.returncode != 0
    assert "RuntimeError: No OpenCL device here can build a kernel" in done.stderr
    assert f"  - {platform} (" in done.stderr, done.stderr[-3000:]
    return False


def test_netcl_platform_picks_an_implementation_by_name():
    needs_intel()
    assert picks("intel", "Intel(R) OpenCL")
    picks("portable", "Portable Computing Language")   # either, as it is here


def test_netcl_platform_naming_a_pocl_that_cannot_compile_explains_why():
    """What the test above meets on a CPU where no PoCL compiles: here
    every PoCL is broken on purpose; Intel's runtime still answers."""
    assert not picks("portable", "Portable Computing Language", BROKEN_POCL)
    if icd.intel_runtime() is not None:
        assert picks("intel", "Intel(R) OpenCL", BROKEN_POCL)


def test_intel_is_found_without_hand_set_variables():
    needs_intel()
    done = child("import os\n"
                 "from netcl_lite.core.device import platforms\n"
                 "print([p.name for p in platforms()])\n"
                 "print(os.environ['OCL_ICD_VENDORS'])\n",
                 {"LD_LIBRARY_PATH": ""})
    assert "Intel(R) OpenCL" in done.stdout, done.stderr[-3000:]
