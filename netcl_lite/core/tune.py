"""Kernel shapes chosen for the device: its properties first, then a clock.

The fast matmul (``kernels/matmul.cl: matmul_tiled``) keeps a TILE_M x
(TILE_V * VW) block of C in vector registers. Which block is fastest depends
on the processor: 6 x 16 in float8 fills the 16 registers of AVX2, while a
CPU that runs AVX-512 natively wants float16 and 6 x 64. So:

1. the device proposes: its preferred float vector width gives VW, and VW
   gives a few candidate tiles (``candidates``);
2. on a CPU device, the first fast matmul in a process times each candidate
   on a 384^3 product (best of five, alternating, in CPU time; about 1-3 s with PoCL's
   build cache cold, well under a second warm). Another tile replaces the
   first candidate only if it takes at least ``MARGIN`` (5%) less time
   (``pick``): two tiles within noise of each other must not make the
   choice a coin flip from one machine, or one run, to the next;
3. the choice is cached on disk, one entry per device and driver, so later
   processes skip step 2.

The cache is ``$NETCL_TUNE_CACHE`` if set, else
``$XDG_CACHE_HOME/netcl_lite/tune.json`` (``~/.cache/netcl_lite/tune.json``).
``NETCL_RETUNE=1`` ignores the cached choice and times again (then stores the
new one); ``NETCL_TUNE=0`` never times and takes the device's first
candidate. A GPU (or a simulator such as Oclgrind, which stands in for
one) is never timed: it gets the first candidate, a small float4 tile that
is valid everywhere.

Every tile in ``TILES`` computes the same products on any device (a float16
tile on a float4 CPU is only slower), and a shape runs the same kernels
under every tile (``functional/matmul.py``: fewer than FEW_ROWS rows go to
``matmul_few_rows``, whatever the tile's height). So a tile can be forced,
to test it or to compare two:

- ``NETCL_TILE=16,14,2`` (VW,TILE_M,TILE_V, one of ``TILES``) for a whole
  process (read at the first fast matmul): no timing, nothing cached; a
  value not in ``TILES`` is a ValueError that lists them;
- ``with forced_tile((16, 14, 2)):`` for a block of code (the tests run
  each tile this way).

>>> from netcl_lite.core.device import manager
>>> from netcl_lite.functional.matmul import tile_config
>>> cfg = tile_config(manager.default("cpu").queue)
>>> sorted(cfg)                                  # build options of the tile
['TILE_M', 'TILE_V', 'VW']
>>> cfg["VW"] in (4, 8, 16)
True
>>> with forced_tile((16, 14, 2)):               # any of TILES, any device
...     tile_config(manager.default("cpu").queue)["TILE_M"]
14
"""

import json
import os
import pathlib
import threading
import time

import numpy as np

from netcl_lite.core.device import device_of
from netcl_lite.core.program import untraced
from netcl_lite.core.tensor import Tensor

VERSION = 2            # bump when a change (kernels, rule) makes old choices stale
TUNE_N = 384           # the timed product is TUNE_N^3
MARGIN = 0.05          # another tile must be this much faster than the first
# The candidates by the CPU's preferred float vector width, best guess first
# (see ``candidates``), and the one tile of a GPU.
CPU_TILES = {16: [(16, 6, 4), (16, 14, 2), (8, 6, 2)],
             8: [(8, 6, 2), (8, 4, 3)],
             4: [(4, 6, 2), (4, 4, 4)]}
GPU_TILES = [(4, 4, 2)]
# Every tile any device may get, once each: what NETCL_TILE and forced_tile
# accept, and what the tests run.
TILES = list(dict.fromkeys([*(t for ts in CPU_TILES.values() for t in ts),
                            *GPU_TILES]))
_chosen = {}           # device key -> config, for this process (each
                       # Device keeps its own in ``device.tile``)
_forced = None         # the config of the innermost ``forced_tile`` block
_configs = {}          # tile -> its config, one dict per tile (see forced_tile)
_options = {}          # a config's items -> its build options
_lock = threading.Lock()


def cache_path():
    """Where choices are stored (see the module docstring)."""
    if os.environ.get("NETCL_TUNE_CACHE"):
        return pathlib.Path(os.environ["NETCL_TUNE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "netcl_lite" / "tune.json"


def device_key(cl_device):
    """One string per device (a ``pyopencl.Device``), driver and kernel
    version."""
    return (f"{cl_device.platform.name} | {cl_device.name} | "
            f"{cl_device.driver_version} | units {cl_device.max_compute_units}"
            f" | matmul v{VERSION}")


def candidates(device):
    """Tiles (VW, TILE_M, TILE_V) worth timing on a Device, best guess first.

    A GPU (and a simulator, which stands in for one: ``kind_of``) gets the
    GPU tile. On a CPU, VW is the preferred float vector width (4, 8 or
    16). A CPU with 16 (AVX-512) may still split each float16 into two
    256-bit halves, so the AVX2 tile stays in the list; timing decides.
    """
    if device.kind != "cpu":
        return list(GPU_TILES)
    width = device.cl_device.preferred_vector_width_float
    for vw in (16, 8):
        if width >= vw:
            return list(CPU_TILES[vw])
    return list(CPU_TILES[4])


def as_config(tile):
    vw, m, v = tile
    return {"VW": vw, "TILE_M": m, "TILE_V": v}


def parse_tile(text):
    """A tile from its text "VW,TILE_M,TILE_V" (NETCL_TILE); one of TILES.

    >>> parse_tile("16,14,2")
    (16, 14, 2)
    >>> parse_tile("16,14")
    Traceback (most recent call last):
    ...
    ValueError: NETCL_TILE must be VW,TILE_M,TILE_V, one of 16,6,4 ...; got '16,14'
    """
    try:
        tile = tuple(int(part) for part in text.split(","))
    except ValueError:
        tile = None
    if tile not in TILES:
        forms = " ".join(",".join(map(str, t)) for t in TILES)
        raise ValueError(f"NETCL_TILE must be VW,TILE_M,TILE_V, one of {forms}; "
                         f"got {text!r}")
    return tile


def _config_of(tile):
    """The one config dict of a tile (``tile_config`` inside a block of the
    same tile returns the same dict)."""
    return _configs.setdefault(tile, as_config(tile))


class forced_tile:
    """Every fast matmul inside the block, on every device and in every
    thread, uses ``tile`` (one of TILES), whatever the tuner chose.

    >>> from netcl_lite.core.device import manager
    >>> from netcl_lite.functional.matmul import tile_config
    >>> queue = manager.default("cpu").queue
    >>> with forced_tile((4, 4, 4)):
    ...     sorted(tile_config(queue).items())
    [('TILE_M', 4), ('TILE_V', 4), ('VW', 4)]
    >>> forced_tile((4, 5, 6))
    Traceback (most recent call last):
    ...
    ValueError: forced_tile: (4, 5, 6) is not one of TILES ...

    Blocks nest; the innermost wins. The device's own choice is kept and
    comes back after the block.
    """

    def __init__(self, tile):
        if tuple(tile) not in TILES:
            raise ValueError(f"forced_tile: {tuple(tile)} is not one of TILES "
                             f"{TILES}")
        self.tile = tuple(tile)

    def __enter__(self):
        global _forced
        self.saved = _forced
        _forced = _config_of(self.tile)
        return self.tile

    def __exit__(self, *exc):
        global _forced
        _forced = self.saved
        return False


def pick(tiles, seconds, margin=MARGIN):
    """The tile to keep: the fastest, if it takes at least ``margin`` less
    time than the first (the device's best guess), else the first.

    0.475 ms against 0.479 ms is noise, and the first stays:

    >>> pick([(8, 6, 2), (8, 4, 3)], {(8, 6, 2): 0.479, (8, 4, 3): 0.475})
    (8, 6, 2)
    >>> pick([(8, 6, 2), (8, 4, 3)], {(8, 6, 2): 0.479, (8, 4, 3): 0.400})
    (8, 4, 3)
    """
    first = tiles[0]
    fastest = min(tiles, key=seconds.get)
    if seconds[fastest] <= (1 - margin) * seconds[first]:
        return fastest
    return first


def options(config):
    """Build options for kernels/matmul.cl: ("-DVW=8", "-DTILE_M=6", ...)."""
    key = tuple(config.items())            # every matmul asks: answer fast
    opts = _options.get(key)
    if opts is None:
        opts = _options[key] = tuple(f"-D{k}={config[k]}" for k in sorted(config))
    return opts


def _load():
    try:
        data = json.loads(cache_path().read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _store(key, entry):
    path = cache_path()
    try:
        data = _load()
        data[key] = entry
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home: tune again next time, still correct


def _time_tiles(device, tiles, square, rounds=5):
    """CPU seconds per TUNE_N^3 product for each tile, best of ``rounds``.

    ``square(a, config)`` computes a @ a with the tile ``config`` (the
    caller's kernel: functional/matmul.py). The process's CPU time (PoCL's
    worker threads are in this process), not the wall clock: on a shared
    machine the wall clock also counts the time spent waiting for a core,
    which has nothing to do with the tile.
    """
    n = TUNE_N
    rng = np.random.default_rng(0)
    a = Tensor.from_host(device, rng.standard_normal((n, n)).astype(np.float32))
    best = {t: float("inf") for t in tiles}
    for t in tiles:                       # build and warm each one
        square(a, as_config(t))
    device.queue.finish()
    for _ in range(rounds):
        for t in tiles:
            start = time.process_time()
            square(a, as_config(t))
            device.queue.finish()
            best[t] = min(best[t], time.process_time() - start)
    return best


def matmul_config(device, square):
    """The matmul tile for a device (a Device or a queue): a dict of build
    macros, kept in ``device.tile``.

    ``square(a, config)``: a @ a with a given tile, used only to time the
    candidates (functional/matmul.py passes its tiled kernel). In order: a
    ``forced_tile`` block, then NETCL_TILE, then the cached or timed choice.
    """
    if _forced is not None:               # inside a forced_tile block
        return _forced
    device = device_of(device)
    if device.tile is not None:           # every matmul asks: answer fast
        return device.tile
    key = device_key(device.cl_device)
    with _lock:
        if key in _chosen:
            device.tile = _chosen[key]
            return device.tile
        tiles = candidates(device)
        choice = tiles[0]
        forced = os.environ.get("NETCL_TILE", "").strip()
        timed = device.kind == "cpu" and len(tiles) > 1 and not forced and \
            os.environ.get("NETCL_TUNE", "1") != "0"
        if forced:                        # the whole process, untimed
            choice = parse_tile(forced)
        elif timed:
            cached = None if os.environ.get("NETCL_RETUNE") == "1" \
                else _load().get(key)
            if cached and tuple(cached.get("tile", ())) in tiles:
                choice = tuple(cached["tile"])
            else:
                start = time.perf_counter()
                with untraced():          # not the caller's launches
                    seconds = _time_tiles(device, tiles, square)
                choice = pick(tiles, seconds)
                _store(key, {"tile": list(choice),
                             "ms": {str(list(t)): round(s * 1e3, 3)
                                    for t, s in seconds.items()},
                             "margin": MARGIN,
                             "tuning_s": round(time.perf_counter() - start, 2)})
        _chosen[key] = device.tile = as_config(choice)
        return device.tile
