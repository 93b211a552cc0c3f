import subprocess
import sys

import pyopencl as cl
import pytest

from netcl_lite.core import device as device_module
from netcl_lite.core.device import DeviceManager, manager


def test_default_is_cached_and_has_a_queue():
    dev = manager.default("auto")
    assert dev is manager.default("auto")
    assert isinstance(dev.queue, cl.CommandQueue)
    assert dev.kind in ("cpu", "gpu") and dev.name


def test_cpu_device_is_there():
    assert manager.default("cpu").kind == "cpu"


def test_env_overrides_auto(monkeypatch):
    monkeypatch.setenv("NETCL_DEVICE", "cpu")
    assert DeviceManager().default("auto").kind == "cpu"
    monkeypatch.setenv("NETCL_DEVICE", "tpu")
    with pytest.raises(ValueError, match="'tpu'"):
        DeviceManager().default("auto")


def test_bad_kind_names_the_value():
    with pytest.raises(ValueError, match="'fpga'"):
        manager.default("fpga")


def test_no_platform_explains_how_to_install(monkeypatch):
    def no_platforms():
        raise cl.LogicError("clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR")

    monkeypatch.setattr(device_module.cl, "get_platforms", no_platforms)
    with pytest.raises(RuntimeError, match=r'pip install "pyopencl\[pocl\]"'):
        DeviceManager().default("auto")
    monkeypatch.setattr(device_module.cl, "get_platforms", lambda: [])
    with pytest.raises(RuntimeError, match="No OpenCL platform"):
        DeviceManager().default("cpu")


def test_import_touches_no_opencl():
    code = (
        "import pyopencl as cl\n"
        "def boom(*a, **k): raise SystemExit('OpenCL touched at import')\n"
        "cl.get_platforms = cl.Context = cl.CommandQueue = boom\n"
        "import netcl_lite, netcl_lite.autograd, netcl_lite.functional\n"
        "import netcl_lite.nn, netcl_lite.nn.transformer, netcl_lite.text\n"
        "print('clean')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True)
    assert done.stdout.strip() == "clean", done.stderr
