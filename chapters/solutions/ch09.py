"""Reference answers for chapter 09's exercises."""

import numpy as np


def exercise_1(train_ids, val_ids, vocab_size):
    """unigram_cross_entropy: add-one smoothed counts, mean -log p on val."""
    counts = np.bincount(np.asarray(train_ids), minlength=vocab_size)
    p = (counts + 1) / (counts.sum() + vocab_size)
    return float(-np.mean(np.log(p[np.asarray(val_ids)])))


def exercise_2(logits, temperature, top_k=None):
    """top_k_probs: the distribution generate() samples from."""
    z = np.asarray(logits, dtype=np.float64) / temperature
    if top_k is not None:
        kth = np.sort(z)[-top_k]                      # the k-th largest
        z = np.where(z >= kth, z, -np.inf)
    e = np.exp(z - z.max())
    return e / e.sum()


def exercise_3(p, g, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8,
               weight_decay=0.01):
    """adamw_step: one AdamW update at step t (1-based) -> (p, m, v)."""
    b1, b2 = betas
    p = p * (1 - lr * weight_decay)
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    m_hat = m / (1 - b1**t)
    v_hat = v / (1 - b2**t)
    return p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
