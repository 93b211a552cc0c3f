"""numpy references: permute, softmax, attention."""

import numpy as np  # noqa: F401
