"""What every check does first: turn the reader's result into numbers, or
fail with a message that says why.

>>> as_number(2, "f")
2.0
>>> as_array([1, 2], "f")
array([1., 2.])
>>> assert_close(np.array([[0.5, 0.25]]), np.array([[0.5, 0.5]]), "y")
Traceback (most recent call last):
...
AssertionError: y[0, 1] = 0.25, want 0.5 (within 1e-06): 1 of 2 values differ
"""

import numpy as np


def as_number(result, name):
    """A float, or an AssertionError naming the function."""
    assert result is not None, f"{name} returned None: did you forget `return`?"
    try:
        return float(result)
    except (TypeError, ValueError) as err:
        raise AssertionError(f"{name} must return a number, got {result!r}") from err


def as_array(result, name, shape=None):
    """A float64 array (of ``shape``, when given), or an AssertionError
    naming the function."""
    assert result is not None, f"{name} returned None: did you forget `return`?"
    try:
        result = np.asarray(result, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise AssertionError(f"{name} must return numbers, got {result!r}") from err
    assert shape is None or result.shape == shape, (
        f"{name} returned shape {result.shape}, expected {shape}"
    )
    return result


def assert_close(got, want, name, rtol=0.0, atol=1e-6, hints=None):
    """Nothing when ``got`` is within ``atol + rtol * |want|`` of ``want``
    everywhere (equal infinities count as close); else an AssertionError at
    the first value that is not, in row-major order, with its index. A NaN
    there is called out: the kernel checks fill outputs with NaN before the
    run, and follow every buffer with NaN. ``hints``: {row: a sentence},
    added when the first such value is in that row."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want)
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    if not bad.any():
        return
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    g, w = got[at], float(want[at])
    message = (f"{name}[{', '.join(map(str, at))}] = {g:.6g}, want {w:.6g} "
               f"(within {atol + rtol * abs(w):.2g}): {int(bad.sum())} of "
               f"{bad.size} values differ")
    if np.isnan(g):
        message += (". NaN: the kernel never wrote this value, or computed "
                    "it from a value read past the end of an input (every "
                    "buffer is followed by NaN)")
    if hints and at[0] in hints:
        message += ". " + hints[at[0]]
    raise AssertionError(message)


def kernel_time(name, mine, rounds, shape):
    """Print one line comparing ``mine`` (seconds) with the library's
    kernels in the fastest of ``rounds`` (each a list of
    ``roofline.profile``'s KernelTimes, for one call); returns mine / the
    library's."""
    found = min(rounds, key=lambda r: sum(k.seconds for k in r))
    library = sum(k.seconds for k in found)
    names = ", ".join(k.name for k in found)
    print(f"On {shape}: {name} {mine * 1e3:.3f} ms, the library's ({names}) "
          f"{library * 1e3:.3f} ms: {mine / library:.1f}x its time")
    return mine / library
