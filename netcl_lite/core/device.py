"""Pick an OpenCL device once, lazily, and hand out its context and queue.

>>> from netcl_lite.core.device import manager
>>> dev = manager.default("cpu")      # PoCL on a laptop
>>> dev.kind
'cpu'
>>> dev is manager.default("cpu")     # one device object per kind
True

``manager.default("auto")`` prefers a GPU and falls back to the CPU; the
environment variable ``NETCL_DEVICE`` ("cpu" or "gpu") overrides "auto".
Nothing here runs at import time.
"""

import os
import threading

import pyopencl as cl

KINDS = ("auto", "cpu", "gpu")

INSTALL_HELP = (
    "No OpenCL platform was found. Install the portable CPU driver with\n"
    '    pip install "pyopencl[pocl]"\n'
    "(or, with conda: conda install -c conda-forge pyopencl pocl),\n"
    "or install your GPU vendor's OpenCL driver."
)


class Device:
    """One OpenCL device with its context and in-order command queue."""

    def __init__(self, cl_device):
        self.cl_device = cl_device
        self.context = cl.Context([cl_device])
        self.queue = cl.CommandQueue(self.context)
        self.name = cl_device.name.strip()
        is_gpu = cl_device.type & cl.device_type.GPU
        self.kind = "gpu" if is_gpu else "cpu"

    def __repr__(self):
        platform = self.cl_device.platform.name.strip()
        return f"Device({self.kind!r}, {self.name!r}, platform={platform!r})"


def _platforms():
    try:
        platforms = cl.get_platforms()
    except cl.Error as err:  # PLATFORM_NOT_FOUND_KHR when no ICD is installed
        raise RuntimeError(f"{INSTALL_HELP}\n(pyopencl said: {err})") from None
    if not platforms:
        raise RuntimeError(INSTALL_HELP)
    return platforms


def _devices(kind):
    """All devices of one kind ("cpu" or "gpu"), over every platform."""
    cl_type = cl.device_type.GPU if kind == "gpu" else cl.device_type.CPU
    found = []
    for platform in _platforms():
        try:
            found += platform.get_devices(device_type=cl_type)
        except cl.Error:  # DEVICE_NOT_FOUND for this platform
            pass
    return found


class DeviceManager:
    """Hands out one cached ``Device`` per kind."""

    def __init__(self):
        self._cache = {}
        self._lock = threading.Lock()  # two threads must get one device

    def default(self, kind="auto"):
        if kind not in KINDS:
            raise ValueError(f"device kind must be one of {KINDS}, got {kind!r}")
        if kind == "auto":
            kind = os.environ.get("NETCL_DEVICE", "auto").strip().lower()
            if kind not in KINDS:
                raise ValueError(
                    f"NETCL_DEVICE must be one of {KINDS}, got {kind!r}"
                )
        with self._lock:
            if kind not in self._cache:
                self._cache[kind] = self._open(kind)
            return self._cache[kind]

    def _open(self, kind):
        order = ("gpu", "cpu") if kind == "auto" else (kind,)
        for candidate in order:
            devices = _devices(candidate)
            if devices:
                return Device(devices[0])
        names = [p.name.strip() for p in _platforms()]
        raise RuntimeError(
            f"no OpenCL {kind} device on the platforms {names}. "
            'Use manager.default("auto") or install a driver for that kind.'
        )


manager = DeviceManager()
