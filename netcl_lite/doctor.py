"""``python -m netcl_lite.doctor``: what OpenCL sees here, and what we chose.

Run it first when something about the device goes wrong, and paste its
output into a bug report (it plays the part of PyTorch's
``python -m torch.utils.collect_env``). It prints:

- the versions of Python, numpy and pyopencl, the CPU, and where the ICD
  loader looks for drivers;
- every platform and device: implementation, LLVM version (PoCL says it),
  whether the test kernel compiles and runs, vector widths, memory and
  compute units;
- the device the course will use, and why (``core/device.py`` has the
  rule);
- the matmul tile the tuner chose, and where its cache lives.

Options: ``--check`` prints one line and exits 1 when no device can build
a kernel (``make install`` uses it); ``--build-log`` also builds every
``kernels/*.cl`` on the chosen device and prints what the compiler said.

>>> import io, contextlib
>>> out = io.StringIO()
>>> with contextlib.redirect_stdout(out):
...     code = main(["--check"])
>>> code, out.getvalue().startswith("ok: ")
(0, True)
"""

import argparse
import json
import os
import platform as host
import re
import sys

import numpy as np
import pyopencl as cl

from netcl_lite.core import device as device_module
from netcl_lite.core import icd, program, tune
from netcl_lite.core.device import manager
from netcl_lite.functional.matmul import tile_config

ENV_VARS = ("NETCL_DEVICE", "NETCL_PLATFORM", "NETCL_TUNE", "NETCL_RETUNE",
            "NETCL_TUNE_CACHE", "OCL_ICD_VENDORS", "POCL_DEVICES",
            "PYOPENCL_CTX", "PYOPENCL_COMPILER_OUTPUT")


def cpu_name():
    """"AMD EPYC (family 26, model 2)" from /proc/cpuinfo, where there is one."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return host.processor() or host.machine()
    def field(name):
        found = re.search(rf"^{name}\s*:\s*(.+)$", text, re.MULTILINE)
        return found.group(1).strip() if found else "?"
    return (f"{field('model name')} (family {field('cpu family')}, "
            f"model {field('model')})")


def llvm_version(platform):
    found = re.search(r"LLVM\s+([\d.]+)", platform.version)
    return found.group(1) if found else "n/a"


def gib(n):
    return f"{n / 2**30:.1f} GiB"


def section(title):
    print(f"\n== {title}")


def print_environment():
    section("environment")
    print(f"python      {sys.version.split()[0]} ({sys.executable})")
    print(f"numpy       {np.__version__}")
    print(f"pyopencl    {cl.VERSION_TEXT}")
    print(f"os          {host.platform()}")
    print(f"cpu         {cpu_name()}, {os.cpu_count()} logical cores")
    for line in icd.prepare():
        print(f"icd         {line}")
    folders = [os.environ.get("OCL_ICD_VENDORS") or
               str(icd.SYSTEM_VENDORS)]
    bundled = os.path.join(os.path.dirname(cl.__file__), ".libs")
    if os.path.isdir(bundled):
        folders.append(bundled)
    for folder in folders:
        if os.path.isdir(folder):
            for name, line in icd._vendor_lines(folder):
                print(f"vendor      {folder}/{name} -> {line}")
        elif os.path.isfile(folder):
            print(f"vendor      {folder} (one library)")
        else:
            print(f"vendor      {folder}: not there")
    for name in ENV_VARS:
        if os.environ.get(name):
            print(f"env         {name}={os.environ[name]}")


def print_platforms():
    """Every platform and device, each with the test build's outcome;
    returns the number of devices that compiled."""
    section("platforms and devices (in the ICD loader's order)")
    try:
        found = device_module.platforms()
    except RuntimeError as err:
        print(err)
        return 0
    working = 0
    for i, platform in enumerate(found):
        print(f"[{i}] {platform.name.strip()}  ({platform.vendor.strip()})")
        print(f"    version  {platform.version.strip()}")
        print(f"    LLVM     {llvm_version(platform)}"
              + ("   (a simulator: used only when NETCL_PLATFORM names it)"
                 if device_module.is_simulator(platform) else ""))
        for d in device_module._devices(platform):
            error, seconds = device_module.probe(d)
            working += error is None
            verdict = (f"yes ({seconds * 1e3:.0f} ms)" if error is None else
                       f"NO: {device_module.first_error_line(error)}")
            print(f"    device   {d.name.strip()} "
                  f"[{device_module.kind_of(d)}]")
            print(f"      compiles        {verdict}")
            print(f"      driver          {d.driver_version.strip()}, "
                  f"{d.opencl_c_version.strip()}")
            print(f"      compute units   {d.max_compute_units}")
            print(f"      float vectors   preferred "
                  f"{d.preferred_vector_width_float}, native "
                  f"{d.native_vector_width_float}")
            print(f"      memory          {gib(d.global_mem_size)} global, "
                  f"{gib(d.max_mem_alloc_size)} per buffer, "
                  f"{d.local_mem_size // 1024} KiB local")
    return working


def print_choice(build_log):
    section("the device the course uses: manager.default('auto')")
    try:
        dev = manager.default("auto")
    except RuntimeError as err:
        print(err)
        return None
    print(f"device      {dev.name} on {dev.platform} [{dev.kind}]")
    print(f"why         {dev.reason}")
    section("matmul tile (core/tune.py)")
    config = tile_config(dev.queue)
    print("tile        " + ", ".join(f"{k}={v}" for k, v in sorted(config.items())))
    path = tune.cache_path()
    print(f"cache       {path}" + ("" if path.is_file() else " (none yet)"))
    try:
        entry = json.loads(path.read_text(encoding="utf-8")).get(
            tune.device_key(dev.cl_device))
    except (OSError, ValueError):
        entry = None
    if entry:
        print(f"measured    {json.dumps(entry, sort_keys=True)}")
    if build_log:
        print_build_logs(dev)
    return dev


def print_build_logs(dev):
    """Build every kernels/*.cl on ``dev`` and print what the compiler said."""
    section("build logs (every kernels/*.cl on the chosen device)")
    for path in sorted(program.kernel_dir().glob("*.cl")):
        source = program.kernel_source(path.stem)
        try:
            built = program.build(dev.context, source)
        except cl.Error as err:
            print(f"-- {path.name}: FAILED\n{err}")
            continue
        log = program.build_log(built)
        print(f"-- {path.name}: " + ("built, compiler silent" if not log
                                     else f"built; the compiler said:\n{log}"))


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m netcl_lite.doctor",
        description="OpenCL platforms, devices, and netcl_lite's choice.")
    parser.add_argument("--check", action="store_true",
                        help="one line; exit 1 when no device can build")
    parser.add_argument("--build-log", action="store_true",
                        help="build every kernel file and print the logs")
    args = parser.parse_args(argv)
    if args.check:
        try:
            dev = manager.default("auto")
        except RuntimeError as err:
            print(f"no working OpenCL device:\n{err}")
            return 1
        print(f"ok: {dev.name} on {dev.platform} [{dev.kind}]")
        return 0
    print_environment()
    working = print_platforms()
    dev = print_choice(args.build_log)
    print()
    if dev is None or not working:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
