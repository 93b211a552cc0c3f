"""How ``manager.default`` chooses among platforms (core/device.py's rule).

Fake platforms stand in for machines we do not have: a PoCL that cannot
compile for the CPU (pip's PoCL 3.0 on AMD Zen 5), Intel's runtime, a GPU
and Oclgrind. ``probe`` (the test build) is replaced by a table of errors.
tests/core/test_implementations.py runs the same cases on real drivers.
"""

import warnings

import pyopencl as cl
import pytest

from netcl_lite.core import device as device_module
from netcl_lite.core.device import DeviceManager, DeviceWarning

ZEN5_LOG = ("clBuildProgram failed: BUILD_PROGRAM_FAILURE - clBuildProgram "
            "failed: BUILD_PROGRAM_FAILURE\n\nBuild on <pyopencl.Device "
            "'pthread-AMD EPYC'>:\n\nerror: unknown target CPU 'generic'\n"
            "note: valid target CPU values are: nocona, core2, ...\n"
            "Device pthread-AMD EPYC failed to build the program\n")


class FakeDevice:
    def __init__(self, name, gpu=False):
        self.name = name
        self.type = cl.device_type.GPU if gpu else cl.device_type.CPU


class FakePlatform:
    def __init__(self, name, version, devices, vendor="someone"):
        self.name, self.version, self.vendor = name, version, vendor
        self.devices = devices

    def get_devices(self):
        return self.devices


class Chosen:
    """Stands in for ``Device``: no real context for a fake device."""

    def __init__(self, cl_device, reason=""):
        self.cl_device, self.name, self.reason = cl_device, cl_device.name, reason

    @classmethod
    def open(cls, cl_device, reason=""):
        return cls(cl_device, reason)


def pip_pocl():
    return FakePlatform("Portable Computing Language",
                        "OpenCL 3.0 PoCL 3.0-rc2  Linux, LLVM 14.0.6",
                        [FakeDevice("pthread-AMD EPYC")], "The pocl project")


def debian_pocl():
    return FakePlatform("Portable Computing Language",
                        "OpenCL 3.0 PoCL 3.1+debian  Linux, LLVM 15.0.6",
                        [FakeDevice("cpu-skylake-avx512-AMD EPYC")],
                        "The pocl project")


def intel():
    return FakePlatform("Intel(R) OpenCL", "OpenCL 3.1 LINUX",
                        [FakeDevice("AMD EPYC")], "Intel(R) Corporation")


def oclgrind():
    return FakePlatform("Oclgrind", "OpenCL 1.2 (Oclgrind 21.10)",
                        [FakeDevice("Oclgrind Simulator", gpu=True)],
                        "University of Bristol")


def a_gpu():
    return FakePlatform("NVIDIA CUDA", "OpenCL 3.0 CUDA 13.0",
                        [FakeDevice("NVIDIA H200", gpu=True)], "NVIDIA")


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """machine(platforms, failing={device name: error}): a DeviceManager
    that sees those platforms; the named devices fail the test build."""
    monkeypatch.delenv("NETCL_PLATFORM", raising=False)
    monkeypatch.delenv("NETCL_DEVICE", raising=False)
    monkeypatch.setattr(device_module, "warned_path",
                        lambda: tmp_path / "skipped-devices.json")
    tried = []

    def setup(platforms, failing=()):
        failing = dict(failing)
        monkeypatch.setattr(device_module, "platforms", lambda: platforms)
        monkeypatch.setattr(device_module, "Device", Chosen)

        def probe(d):
            tried.append(d.name)
            return failing.get(d.name), 0.01
        monkeypatch.setattr(device_module, "probe", probe)
        return DeviceManager()
    setup.tried = tried
    return setup


def test_a_broken_platform_listed_first_is_skipped_with_a_warning(machine):
    manager = machine([pip_pocl(), intel()],
                      failing={"pthread-AMD EPYC": ZEN5_LOG})
    with pytest.warns(DeviceWarning) as caught:
        chosen = manager.default("auto")
    assert chosen.name == "AMD EPYC"                # Intel's
    (warning,) = caught
    text = str(warning.message)
    assert "\n" not in text                         # one line
    assert "PoCL 3.0-rc2" in text and "pthread-AMD EPYC" in text
    assert "unknown target CPU 'generic'" in text and "Intel(R) OpenCL" in text
    assert "1 listed before it failed" in chosen.reason


def test_the_skip_warning_shows_once_per_machine(machine):
    platforms = [pip_pocl(), intel()]
    failing = {"pthread-AMD EPYC": ZEN5_LOG}
    with pytest.warns(DeviceWarning):
        machine(platforms, failing).default("auto")
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a second warning would raise
        chosen = machine(platforms, failing).default("auto")
    assert chosen.name == "AMD EPYC"            # still skipped, still Intel
    assert "1 listed before it failed" in chosen.reason


def test_nothing_compiles_names_each_platform_the_cause_and_the_fixes(machine):
    other = FakePlatform("Other CL", "OpenCL 1.2 other", [FakeDevice("cpu2")])
    manager = machine([pip_pocl(), other],
                      failing={"pthread-AMD EPYC": ZEN5_LOG,
                               "cpu2": "clBuildProgram failed\nerror: oops"})
    with pytest.raises(RuntimeError) as raised:
        manager.default("auto")
    text = str(raised.value)
    assert "Portable Computing Language (OpenCL 3.0 PoCL 3.0-rc2)" in text
    assert "error: unknown target CPU 'generic'" in text
    assert "Other CL" in text and "error: oops" in text
    assert "LLVM that does not know this CPU" in text and "Zen 5" in text
    fixes = ["apt-get install pocl-opencl-icd", "conda-forge pocl",
             'pip install "netcl_lite[intel]"', "python -m netcl_lite.doctor"]
    where = [text.index(f) for f in fixes]
    assert where == sorted(where)                   # in the order to try


def test_the_cause_is_only_named_when_it_is_the_unknown_cpu(machine):
    manager = machine([intel()], failing={"AMD EPYC": "error: something"})
    with pytest.raises(RuntimeError) as raised:
        manager.default("cpu")
    assert "does not know this CPU" not in str(raised.value)
    assert "No OpenCL cpu device here" in str(raised.value)


def test_pocl_comes_before_other_cpu_implementations(machine):
    manager = machine([intel(), debian_pocl()])
    assert manager.default("auto").name == "cpu-skylake-avx512-AMD EPYC"


def test_among_pocls_the_newest_comes_first(machine):
    manager = machine([pip_pocl(), debian_pocl()])
    assert manager.default("cpu").name == "cpu-skylake-avx512-AMD EPYC"
    assert machine.tried == ["cpu-skylake-avx512-AMD EPYC"]   # one probe


def test_otherwise_the_loaders_order_decides(machine):
    second = FakePlatform("Other CL", "OpenCL 1.2", [FakeDevice("cpu2")])
    third = FakePlatform("Third CL", "OpenCL 1.2", [FakeDevice("cpu3")])
    assert machine([second, third]).default("cpu").name == "cpu2"
    assert machine([third, second]).default("cpu").name == "cpu3"


def test_auto_prefers_a_gpu_and_never_a_simulator(machine):
    manager = machine([oclgrind(), pip_pocl(), a_gpu()])
    assert manager.default("auto").name == "NVIDIA H200"
    assert manager.default("cpu").name == "pthread-AMD EPYC"
    manager = machine([oclgrind(), pip_pocl()])
    assert manager.default("auto").name == "pthread-AMD EPYC"
    with pytest.raises(RuntimeError, match="no OpenCL gpu device"):
        manager.default("gpu")
    assert "Oclgrind Simulator" not in machine.tried


def test_netcl_platform_selects_by_name_vendor_or_version(machine, monkeypatch):
    platforms = [debian_pocl(), pip_pocl(), intel(), oclgrind()]
    for wanted, name in [("intel", "AMD EPYC"),
                         ("OCLGRIND", "Oclgrind Simulator"),
                         ("pocl 3.0", "pthread-AMD EPYC"),
                         ("LLVM 15", "cpu-skylake-avx512-AMD EPYC"),
                         ("portable", "cpu-skylake-avx512-AMD EPYC")]:
        monkeypatch.setenv("NETCL_PLATFORM", wanted)
        assert machine(platforms).default("auto").name == name, wanted


def test_netcl_platform_that_matches_nothing_lists_the_platforms(
        machine, monkeypatch):
    monkeypatch.setenv("NETCL_PLATFORM", "rocm")
    with pytest.raises(RuntimeError) as raised:
        machine([pip_pocl(), intel()]).default("auto")
    text = str(raised.value)
    assert "NETCL_PLATFORM='rocm'" in text
    assert "Portable Computing Language" in text and "Intel(R) OpenCL" in text


def test_the_choice_is_cached_per_kind_and_platform(machine, monkeypatch):
    manager = machine([pip_pocl(), intel()])
    first = manager.default("auto")
    assert manager.default("auto") is first
    monkeypatch.setenv("NETCL_PLATFORM", "intel")
    assert manager.default("auto").name == "AMD EPYC"


def test_first_error_line_skips_pyopencls_framing():
    line = device_module.first_error_line
    assert line(ZEN5_LOG) == "error: unknown target CPU 'generic'"
    assert line("clBuildProgram failed: INVALID_BUILD_OPTIONS\n\nBuild on "
                "<x>:\n\nInvalid build option: -mcpu=generic\n(options: -I a)"
                ) == "Invalid build option: -mcpu=generic"
    assert line("") == "(no message)"


def test_a_queue_whose_context_is_gone_gets_a_clear_error():
    class GoneQueue:
        @property
        def context(self):
            raise cl.LogicError("clRetainContext failed: INVALID_CONTEXT")
    with pytest.raises(ValueError, match="keep a reference to the cl.Context"):
        device_module.context_of(GoneQueue())


def test_the_real_probe_builds_and_runs_on_the_chosen_device():
    dev = device_module.manager.default("auto")
    error, seconds = device_module.probe(dev.cl_device)
    assert error is None and seconds > 0
