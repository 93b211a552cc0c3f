"""Interpretability on the library's own kernels (chapter 10): ablations,
activation and attribution patching, direct logit attribution, the logit
lens, and a head's QK and OV circuits with composition scores.

Every tool reads or replaces a ``DecoderLM``'s named activations
(``DecoderLM.run_with_cache``, ``run_with_hooks``, ``activation_grads``;
the names are listed in ``netcl_lite/nn/hooks.py``), or its weights.
Heads are (layer, h) pairs; a layer, head or position the model does not
have is a ValueError naming it.

>>> from netcl_lite.interp import mean_ablation, activation_patching
"""

from netcl_lite.interp.ablation import (mean_ablation, resample_ablation,
                                        zero_ablation)
from netcl_lite.interp.attribution import (Attribution, direct_logit_attribution,
                                           residual_parts)
from netcl_lite.interp.circuits import (copying_fraction, copying_score,
                                        ov_circuit, ov_matrix, positional_scores,
                                        qk_circuit, qk_matrix, rope_rotation)
from netcl_lite.interp.composition import composition_score, random_baseline
from netcl_lite.interp.logit_lens import logit_lens
from netcl_lite.interp.metric import LogitMetric
from netcl_lite.interp.patching import activation_patching, attribution_patching
from netcl_lite.interp.weights import embedding, head_matrices, unembedding

__all__ = [
    # replacing activations
    "zero_ablation", "mean_ablation", "resample_ablation",
    # which activations matter
    "LogitMetric", "activation_patching", "attribution_patching",
    # what each part writes
    "direct_logit_attribution", "Attribution", "residual_parts", "logit_lens",
    # reading the weights
    "embedding", "unembedding", "head_matrices", "qk_matrix", "ov_matrix",
    "qk_circuit", "ov_circuit", "copying_score", "copying_fraction",
    "positional_scores", "rope_rotation", "composition_score",
    "random_baseline",
]
