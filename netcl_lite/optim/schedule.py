"""``cosine_lr``: linear warmup, then a cosine decay (chapter 09).

Adam's first steps rest on moment estimates from a handful of batches, so
the learning rate ramps up over ``warmup`` steps; it then falls along half
a cosine to ``min_lr`` at the last step.

>>> [round(cosine_lr(s, 10, 1.0, warmup=2), 3) for s in (0, 1, 2, 6, 9)]
[0.5, 1.0, 1.0, 0.389, 0.0]
"""

import math


def cosine_lr(step, total_steps, peak_lr, warmup=0, min_lr=0.0):
    """The learning rate at step (0-based) of total_steps."""
    if total_steps <= 0 or not 0 <= warmup < total_steps:
        raise ValueError(
            f"cosine_lr: need total_steps > 0 and 0 <= warmup < total_steps, "
            f"got total_steps={total_steps}, warmup={warmup}"
        )
    if step < warmup:
        return peak_lr * (step + 1) / warmup
    span = max(total_steps - 1 - warmup, 1)
    progress = min((step - warmup) / span, 1.0)
    return min_lr + 0.5 * (peak_lr - min_lr) * (1.0 + math.cos(math.pi * progress))
