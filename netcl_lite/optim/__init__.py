"""Optimizers: AdamW with a cosine schedule and gradient clipping (chapter 09).

A training step, with ``model`` any ``netcl_lite.nn.Module``:

    with ag.Tape() as tape:
        loss = model.loss(x, y)
    model.zero_grad()                       # or opt.zero_grad()
    tape.backward(loss)
    clip_grad_norm(model.parameters(), 1.0)
    opt.lr = cosine_lr(step, steps, 3e-3, warmup=20)
    opt.step()

>>> from netcl_lite.optim import AdamW, clip_grad_norm, cosine_lr
"""

from netcl_lite.optim.adamw import AdamW
from netcl_lite.optim.clip import clip_grad_norm, grad_norm
from netcl_lite.optim.schedule import cosine_lr

__all__ = ["AdamW", "clip_grad_norm", "grad_norm", "cosine_lr"]
