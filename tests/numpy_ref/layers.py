"""numpy references: rope, repeat_kv, embedding, rms_norm, silu, cross_entropy."""

import numpy as np  # noqa: F401
