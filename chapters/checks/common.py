"""What every check does first: turn the reader's result into numbers, or
fail with a message that says why.

>>> as_number(2, "f")
2.0
>>> as_array([1, 2], "f")
array([1., 2.])
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
