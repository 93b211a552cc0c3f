"""Independent numpy references: the spec every kernel is tested against.

Each op has ``<op>(...)`` (forward, float64) and ``<op>_vjp(..., g)``
returning one gradient per differentiable input. One file per area.
"""

from numpy_ref.attention import *  # noqa: F401,F403
from numpy_ref.basic import *  # noqa: F401,F403
from numpy_ref.layers import *  # noqa: F401,F403
