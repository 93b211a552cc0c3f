"""The device: one object per OpenCL device (``Device``), and how
``manager.default`` picks one that works, once, lazily.

>>> from netcl_lite.core.device import manager
>>> dev = manager.default("cpu")      # PoCL on a laptop
>>> dev.kind
'cpu'
>>> dev is manager.default("cpu")     # one device object per kind
True
>>> "compiles" in dev.reason          # why this one (the doctor prints it)
True

A machine may list several OpenCL platforms (implementations), and one
that is listed may still be unable to compile: pip's PoCL 3.0 does not
know AMD's Zen 5 CPUs. So ``default`` tries each candidate with a tiny
test kernel (build and run) before it chooses, by this rule:

1. ``NETCL_PLATFORM``, if set, keeps only the platforms whose name, vendor
   or version contains it (case-insensitive): ``intel``, ``portable``,
   ``pocl 3.1``, ``oclgrind``;
2. a simulator (Oclgrind) is a candidate only when ``NETCL_PLATFORM``
   names it: it checks kernels, 1000x slower, and is never a default;
3. the kind: "auto" tries GPUs first, then CPUs (``NETCL_DEVICE``, "cpu"
   or "gpu", overrides "auto"); "cpu" and "gpu" try only that kind;
4. among CPUs, PoCL comes before other implementations (the course's
   stored outputs were made with it), and a newer PoCL before an older
   one (its LLVM knows more CPUs); otherwise the ICD loader's order;
5. the first candidate whose test kernel builds and runs is chosen. Each
   one skipped on the way gives a one-line warning that says why, once
   per machine (``first_time``). When
   none works, a RuntimeError lists every platform tried, its error, and
   the fixes.

Nothing here runs at import time. ``python -m netcl_lite.doctor`` prints
every platform, whether it compiles, and the choice.

A ``Device`` is the one object that stands for an OpenCL device in the
library; every Tensor holds one. It owns the in-order command queue and
its context, the device's facts (read once, each decided here and nowhere
else), the kernels built for it (``core/program.py``), its pool of reused
buffers (``core/pool.py``), its matmul tile (``core/tune.py``) and what an
op keeps between calls (``kept``: RoPE's angle tables).

Everything that takes a device also takes a pyopencl queue, so that code
written against queues goes on working: ``Tensor.from_host(dev.queue, x)``
and ``launch(x.queue, ...)``. ``device_of(queue)`` finds the queue's
Device: the queue holds it, as an attribute (pyopencl queues take
attributes, not weak references). A queue you make yourself,
``cl.CommandQueue(dev.context)``, gets a Device of its own on first use
(its own pool and tile; the kernels already built for the context are
shared). The queue and its Device refer to each other, so they live and go
together: Python's collector frees the pair once nothing else holds either.

>>> import pyopencl as cl
>>> device_of(dev.queue) is dev
True
>>> mine = cl.CommandQueue(dev.context)
>>> device_of(mine) is dev, device_of(mine) is device_of(mine)
(False, True)
>>> device_of(mine).programs is dev.programs     # built once per context
True
>>> device_of("a queue")
Traceback (most recent call last):
...
ValueError: expected a netcl_lite Device or a pyopencl CommandQueue, got str 'a queue'
"""

import json
import os
import pathlib
import re
import threading
import time
import warnings
import weakref

import numpy as np
import pyopencl as cl

from netcl_lite.core import icd, pool

KINDS = ("auto", "cpu", "gpu")
SIMULATORS = ("oclgrind",)   # platform names that are checkers, not devices

INSTALL_HELP = (
    "No OpenCL platform was found. Install the portable CPU driver with\n"
    '    pip install "pyopencl[pocl]"\n'
    "(or, with conda: conda install -c conda-forge pyopencl pocl),\n"
    "or install your GPU vendor's OpenCL driver."
)

FIXES = """\
To fix it, install an OpenCL implementation that compiles for this CPU; \
any one of these (the first that fits your machine):
  1. Debian or Ubuntu: sudo apt-get install pocl-opencl-icd
  2. conda: conda install -c conda-forge pocl
  3. any Linux, no root: pip install "netcl_lite[intel]"
     (Intel's OpenCL CPU runtime from PyPI, about 700 MB; it runs on AMD
     CPUs too, and netcl_lite finds it in the active environment)
Then run `python -m netcl_lite.doctor` to see every platform and whether \
it compiles."""

UNKNOWN_CPU = (
    "Cause: this PoCL was built with an LLVM that does not know this CPU, so "
    "it asks for the CPU 'generic', which LLVM then refuses. pip's PoCL 3.0 "
    "(LLVM 14, 2022) does this on AMD CPUs of family 1Ah (Zen 5: Ryzen 9000, "
    "Ryzen AI 300, EPYC 9005); PoCL 3.0 has no setting to name the CPU.")

# The test kernel: a float4 read, a builtin and a store, like the real ones.
PROBE_SOURCE = """
__kernel void netcl_probe(__global const float4 *x, __global float *y) {
    int i = get_global_id(0);
    float4 v = x[i];
    y[i] = sqrt(v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w);
}
"""


class DeviceWarning(UserWarning):
    """A platform was skipped: it is listed but cannot build a kernel."""


# --- the device's facts: each decided once, here ---------------------------------
def implementation(platform):
    """Which OpenCL implementation a platform is: "pocl", "oclgrind",
    "intel", or its name in lower case for any other.

    >>> from types import SimpleNamespace as P
    >>> implementation(P(name="Portable Computing Language"))
    'pocl'
    >>> implementation(P(name="Intel(R) OpenCL")), implementation(P(name="Oclgrind"))
    ('intel', 'oclgrind')
    """
    name = platform.name.strip().lower()
    for known, marker in (("pocl", "portable computing language"),
                          ("oclgrind", "oclgrind"), ("intel", "intel")):
        if marker in name:
            return known
    return name


def is_simulator(platform):
    """A platform that checks kernels instead of running them fast
    (Oclgrind): never a default, and treated as a GPU by ``kind_of``."""
    return implementation(platform) in SIMULATORS


def is_pocl(platform):
    return implementation(platform) == "pocl"


# Device types that are not a CPU, or not only one: Oclgrind reports
# CPU | GPU | ACCELERATOR at once.
NOT_A_CPU = cl.device_type.GPU | cl.device_type.ACCELERATOR


def kind_of(cl_device):
    """"cpu" for a CPU device, "gpu" for anything else: a GPU, an
    accelerator, and a simulator such as Oclgrind, which reports every type
    at once and stands in for a GPU (one value per work-item, the simple
    attention kernel, the GPU's matmul tile, never timed).

    >>> from types import SimpleNamespace as D
    >>> T = cl.device_type
    >>> kind_of(D(type=T.CPU)), kind_of(D(type=T.GPU))
    ('cpu', 'gpu')
    >>> kind_of(D(type=T.CPU | T.GPU | T.ACCELERATOR | T.DEFAULT))  # Oclgrind
    'gpu'
    """
    cpu = cl_device.type & cl.device_type.CPU
    return "cpu" if cpu and not cl_device.type & NOT_A_CPU else "gpu"


# --- the device ------------------------------------------------------------------
QUEUE_ATTRIBUTE = "netcl_lite_device"   # where a pyopencl queue keeps its Device
_live = weakref.WeakSet()   # every live Device (not kept alive): the
                            # Devices of one context share its kernels
_attach_lock = threading.Lock()  # one Device per queue, even from two threads


class Device:
    """One OpenCL device as the library uses it (see the module docstring).

    ``queue``, ``context``, ``cl_device``: the pyopencl objects.
    Facts, read once: ``name``, ``platform`` (its name), ``implementation``
    ("pocl", "intel", "oclgrind", ...), ``kind`` ("cpu" or "gpu",
    ``kind_of``), ``simulator``, ``host_memory`` (buffers live in this
    process's memory: a CPU or a simulator), ``max_alloc`` and
    ``global_mem`` (bytes), ``in_order`` (the queue runs in order).
    Caches: ``programs`` (the kernels built, ``core/program.py``),
    ``allocate`` (the buffer pool, ``core/pool.py``), ``tile`` (the matmul
    tile, ``core/tune.py``), ``kept`` (what an op keeps, by a key of its
    own). ``reason``: why ``manager.default`` chose it.

    Make one with ``manager.default(kind)``, or ``device_of(queue)`` for a
    queue of your own; ``Device(queue)`` is what both call.
    """

    def __init__(self, queue, context=None, reason=""):
        if not isinstance(queue, cl.CommandQueue):
            raise ValueError("a Device wraps a pyopencl CommandQueue, got "
                             f"{type(queue).__name__}")
        # held: Intel's runtime frees a context that only a queue holds
        # (see ``context_of``)
        self.context = context_of(queue) if context is None else context
        self.queue = queue
        cl_device = self.cl_device = queue.device
        platform = cl_device.platform
        self.name = cl_device.name.strip()
        self.platform = platform.name.strip()
        self.implementation = implementation(platform)
        self.simulator = is_simulator(platform)
        self.kind = kind_of(cl_device)
        self.host_memory = self.kind == "cpu" or self.simulator
        self.max_alloc = cl_device.max_mem_alloc_size
        self.global_mem = cl_device.global_mem_size
        self.in_order = not (queue.properties & cl.command_queue_properties
                             .OUT_OF_ORDER_EXEC_MODE_ENABLE)
        self.reason = reason
        self.programs = _programs_of(self.context)
        self.allocate, self.pool = pool.allocator(self)
        self.tile = None
        self.kept = {}
        setattr(queue, QUEUE_ATTRIBUTE, self)
        _live.add(self)

    @classmethod
    def open(cls, cl_device, reason=""):
        """A Device of its own: a new context and in-order queue on
        ``cl_device`` (what ``manager.default`` hands out)."""
        context = cl.Context([cl_device])
        return cls(cl.CommandQueue(context), context, reason)

    def release_idle(self):
        """Free the idle buffers this device's pool holds (e.g. before
        loading a big model); buffers in use stay."""
        if self.pool is not None:
            self.pool.free_held()

    def __repr__(self):
        return (f"Device({self.kind!r}, {self.name!r}, "
                f"platform={self.platform!r})")


def _programs_of(context):
    """The kernels built for ``context`` so far, shared by every Device of
    that context: a live Device's, else a new table. (Two pyopencl objects
    of one context compare equal; a live Device holds its context, so the
    context cannot be freed and its handle reused meanwhile.)"""
    for other in list(_live):
        if other.context == context:
            return other.programs
    return {}


def device_of(where):
    """The Device of ``where``: a Device itself, or a pyopencl queue (its
    Device, made on first use and kept in the queue); else a ValueError.

    Every launch asks, so the common cases return at once.
    """
    if type(where) is Device:
        return where
    found = getattr(where, QUEUE_ATTRIBUTE, None)
    if found is not None:
        return found
    if isinstance(where, Device):
        return where
    if not isinstance(where, cl.CommandQueue):
        shown = f" {where!r}" if isinstance(where, (str, int, float)) else ""
        raise ValueError("expected a netcl_lite Device or a pyopencl "
                         f"CommandQueue, got {type(where).__name__}{shown}")
    with _attach_lock:
        found = getattr(where, QUEUE_ATTRIBUTE, None)
        return found if found is not None else Device(where)


def context_of(queue):
    """``queue.context``, or a ValueError when that context is gone.

    OpenCL says a queue keeps its context alive; Intel's CPU runtime frees
    a context once no ``cl.Context`` object holds it, even while a queue
    does, and then every use of the queue fails. A Device holds its
    context, so a queue keeps working from the moment its Device is made.
    """
    try:
        return queue.context
    except cl.Error as err:
        raise ValueError(
            "this command queue's OpenCL context is gone "
            f"({str(err).splitlines()[0]}): keep a reference to the "
            "cl.Context for as long as its queues are used (Intel's runtime "
            "frees a context that only a queue holds)") from None


def platforms():
    """Every OpenCL platform, in the ICD loader's order (after ``icd.prepare``
    has made pip-installed drivers visible)."""
    icd.prepare()
    try:
        found = cl.get_platforms()
    except cl.Error as err:  # PLATFORM_NOT_FOUND_KHR when no ICD is installed
        raise RuntimeError(f"{INSTALL_HELP}\n(pyopencl said: {err})") from None
    if not found:
        raise RuntimeError(INSTALL_HELP)
    return found


def describe(platform):
    """"name | vendor | version" of a platform: what NETCL_PLATFORM searches."""
    return " | ".join(s.strip() for s in
                      (platform.name, platform.vendor, platform.version))


def pocl_version(platform):
    """(3, 1) from "OpenCL 3.0 PoCL 3.1+debian ...", (0,) when not PoCL."""
    found = re.search(r"PoCL (\d+)\.(\d+)", platform.version)
    return tuple(map(int, found.groups())) if found else (0,)


def cpu_rank(platform):
    """Sort key of CPU platforms: PoCL first, the newest PoCL first (a
    newer LLVM knows newer CPUs), then the rest."""
    if not is_pocl(platform):
        return (1, ())
    return (0, tuple(-v for v in pocl_version(platform)))


def _devices(platform):
    try:
        return platform.get_devices()
    except cl.Error:  # DEVICE_NOT_FOUND for this platform
        return []


def candidates(kind, wanted=None, found=None):
    """(platform, device) pairs to try, in the order of the rule above.

    ``kind``: "auto", "cpu" or "gpu"; ``wanted``: a NETCL_PLATFORM value.
    """
    found = platforms() if found is None else found
    if wanted:
        found = [p for p in found if wanted.lower() in describe(p).lower()]
    else:
        found = [p for p in found if not is_simulator(p)]
    order = ("gpu", "cpu") if kind == "auto" else (kind,)
    pairs = []
    for want in order:
        of_kind = [(p, d) for p in found for d in _devices(p)
                   if kind_of(d) == want]
        if want == "cpu":   # sorted() keeps the loader's order among equals
            of_kind = sorted(of_kind, key=lambda pd: cpu_rank(pd[0]))
        pairs += of_kind
    return pairs


def first_error_line(text):
    """The line of a build error worth showing: the compiler's first line
    with "error", else its first line (pyopencl's own framing left out).

    >>> first_error_line("clBuildProgram failed: BUILD_PROGRAM_FAILURE\\n"
    ...     "Build on <Device>:\\n\\nerror: unknown target CPU 'generic'")
    "error: unknown target CPU 'generic'"
    """
    framing = ("clBuildProgram failed", "Build on <", "(options:")
    lines = [line.strip() for line in str(text).splitlines()
             if line.strip() and not line.strip().startswith(framing)]
    for line in lines:
        if re.search(r"\berror\b", line, re.IGNORECASE):
            return line
    if lines:
        return lines[0]
    return str(text).strip().splitlines()[0] if str(text).strip() \
        else "(no message)"


def probe(cl_device):
    """Build and run the test kernel on one device.

    Returns (None, seconds) when it works, else (the error text, seconds).
    The compiler's remarks on success are not shown (``program.py`` keeps
    logs for the doctor).
    """
    start = time.perf_counter()
    try:
        context = cl.Context([cl_device])
        queue = cl.CommandQueue(context)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cl.CompilerWarning)
            program = cl.Program(context, PROBE_SOURCE).build()
        x = np.full((4, 4), 2.0, dtype=np.float32)      # |(2,2,2,2)| = 4
        y = np.zeros(4, dtype=np.float32)
        mf = cl.mem_flags
        xb = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
        yb = cl.Buffer(context, mf.WRITE_ONLY, y.nbytes)
        program.netcl_probe(queue, (4,), None, xb, yb)
        cl.enqueue_copy(queue, y, yb)
        if not np.allclose(y, 4.0):
            return f"the test kernel ran but computed {y}, not 4.0", \
                time.perf_counter() - start
    except (cl.Error, RuntimeError) as err:
        return str(err), time.perf_counter() - start
    return None, time.perf_counter() - start


def _label(platform, device):
    """"Portable Computing Language (OpenCL 3.0 PoCL 3.0-rc2 ...) on
    'pthread-AMD EPYC'": which implementation, which version, which device."""
    version = " ".join(platform.version.split()[:4])
    return (f"{platform.name.strip()} ({version}) on "
            f"{device.name.strip()!r}")


def no_device_error(kind, wanted, tried, all_platforms):
    """The RuntimeError for "nothing compiles": each platform tried with its
    error, the cause when it is known, and the fixes."""
    names = [describe(p) for p in all_platforms]
    if not tried:
        if wanted:
            return RuntimeError(
                f"NETCL_PLATFORM={wanted!r} matches no OpenCL platform "
                f"with a {kind} device; the platforms are {names}. "
                "Unset it, or give part of one of these names.")
        return RuntimeError(
            f"no OpenCL {kind} device on the platforms {names}. "
            'Use manager.default("auto") or install a driver for that kind.')
    what = "device" if kind == "auto" else f"{kind} device"
    lines = [f"No OpenCL {what} here can build a kernel. Tried:"]
    for label, error in tried:
        lines.append(f"  - {label}: {first_error_line(error)}")
    if any("unknown target CPU" in error for _, error in tried):
        lines.append(UNKNOWN_CPU)
    lines.append(FIXES)
    return RuntimeError("\n".join(lines))


def warned_path():
    """Where the skip warnings already shown on this machine are listed:
    ``$XDG_CACHE_HOME/netcl_lite/skipped-devices.json``."""
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "netcl_lite" / "skipped-devices.json"


def first_time(line):
    """True the first time this machine sees the skip warning ``line``.

    A platform that cannot compile stays broken, and a warning in every
    process (every notebook's first cell) would bury the chapters' output;
    so each warning shows once, and ``python -m netcl_lite.doctor`` always
    shows every platform's test build. An unwritable cache warns each time.
    """
    path = warned_path()
    try:
        seen = json.loads(path.read_text(encoding="utf-8"))
        seen = seen if isinstance(seen, list) else []
    except (OSError, ValueError):
        seen = []
    if line in seen:
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(seen + [line], indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
    return True


class DeviceManager:
    """Hands out one cached ``Device`` per kind (and NETCL_PLATFORM)."""

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
        wanted = os.environ.get("NETCL_PLATFORM", "").strip()
        with self._lock:
            key = (kind, wanted)
            if key not in self._cache:
                self._cache[key] = self._open(kind, wanted)
            return self._cache[key]

    def _open(self, kind, wanted):
        all_platforms = platforms()
        tried = []
        for platform, cl_device in candidates(kind, wanted, all_platforms):
            error, seconds = probe(cl_device)
            if error is None:
                for label, skipped in tried:
                    line = (f"skipped {label}: {first_error_line(skipped)}; "
                            f"using {_label(platform, cl_device)}")
                    if first_time(line):
                        warnings.warn(line, DeviceWarning, stacklevel=3)
                return Device.open(cl_device, self._reason(
                    kind, wanted, platform, tried, seconds))
            tried.append((_label(platform, cl_device), error))
        raise no_device_error(kind, wanted, tried, all_platforms)

    @staticmethod
    def _reason(kind, wanted, platform, tried, seconds):
        rule = f"NETCL_PLATFORM={wanted!r}" if wanted else (
            "GPUs before CPUs, PoCL first and newest first among CPUs, "
            "simulators left out"
            if kind == "auto" else
            f"kind {kind!r}, PoCL first and newest first among CPUs, "
            "simulators left out")
        skipped = f"; {len(tried)} listed before it failed the test build" \
            if tried else ""
        return (f"the first candidate ({rule}) whose test kernel compiles "
                f"and runs ({seconds * 1e3:.0f} ms){skipped}")


manager = DeviceManager()
