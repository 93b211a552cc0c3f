"""QK and OV circuits, copying scores and composition scores
(netcl_lite/interp/circuits.py, composition.py), on hand-built weights and
against the attention the model computes."""

import numpy as np
import pytest

import netcl_lite.functional as F
from interp_ref import forward, tiny
from netcl_lite.core.tensor import Tensor
from netcl_lite.interp import (composition_score, copying_fraction,
                               copying_score, head_matrices, ov_circuit,
                               positional_scores, qk_circuit, qk_matrix,
                               random_baseline, rope_rotation)
from netcl_lite.interp.composition import compose
from numpy_ref.layers import rms_norm


def set_weight(queue, node, array):
    node.value = Tensor.from_host(queue, np.asarray(array, np.float64))


@pytest.mark.parametrize("offset", [0, 1, 5])
def test_the_rotation_is_the_kernels_rope(queue, rng, offset):
    x = rng.standard_normal((1, 1, 3, 8))
    got = F.rope(Tensor.from_host(queue, x), offset=offset).value.to_host()
    for row in range(3):
        want = x[0, 0, row] @ rope_rotation(8, offset + row)
        np.testing.assert_allclose(got[0, 0, row], want, atol=1e-5)


def test_qk_matrix_gives_the_models_attention_scores(model, ids):
    """softmax over keys of x_q M(i - j) x_k^T, x the normalised stream
    before the gain, is the pattern the model computes."""
    _, acts = forward(model, ids)
    eps = model.config.norm_eps
    for layer in range(2):
        x = acts[f"blocks.{layer}.resid_pre"]
        n = rms_norm(x, np.ones(x.shape[-1]), eps)          # (B, S, D)
        S = x.shape[1]
        for h in (0, model.config.n_heads - 1):
            scores = np.full((len(ids), S, S), -np.inf)
            for i in range(S):
                for j in range(i + 1):
                    M = qk_matrix(model, layer, h, offset=i - j)
                    scores[:, i, j] = np.einsum("bd,de,be->b", n[:, i], M, n[:, j])
            A = np.exp(scores - scores.max(-1, keepdims=True))
            A /= A.sum(-1, keepdims=True)
            np.testing.assert_allclose(A, acts[f"blocks.{layer}.attn.pattern"][:, h],
                                       atol=1e-6)


def test_the_vocabulary_circuits_are_the_direct_path(queue):
    """For a lone token at block 0, QK and OV over the vocabulary are what
    the first layer computes from the embeddings."""
    model = tiny(queue, H=2, HKV=1)
    E = model.tok_emb.weight.value.to_host().astype(np.float64)
    n = E / np.sqrt((E * E).mean(1, keepdims=True) + model.config.norm_eps)
    W = head_matrices(model, 0, 1)
    qk = qk_circuit(model, 0, 1, offset=2)
    R = rope_rotation(4, 2)                          # hd = 8 / 2
    np.testing.assert_allclose(qk, (n @ W["W_Q"] @ R) @ (n @ W["W_K"]).T / 2.0,
                               atol=1e-9)
    ov = ov_circuit(model, 0, 1)
    gain = model.norm.weight.value.to_host()
    W_U = model.head.weight.value.to_host()
    np.testing.assert_allclose(ov, n @ W["W_V"] @ W["W_O"] @ (gain[:, None] * W_U),
                               atol=1e-9)


def test_copying_scores_of_hand_built_heads(queue):
    """W_V W_O that maps each token's vector to itself, with W_U = W_E^T:
    a copying head, score +1; the negated map, -1."""
    model = tiny(queue, H=2, HKV=2, vocab_size=8, attn_only=True)
    D = 8
    E = np.eye(8, D) * np.sqrt(D)                   # unit rms rows
    set_weight(queue, model.tok_emb.weight, E)
    set_weight(queue, model.head.weight, E.T)
    attn = model.blocks[0].attn
    wv = np.zeros((D, D))
    wv[:4, :4] = np.eye(4)                          # head 0 reads dims 0..3
    wo = np.zeros((D, D))
    wo[:4, :4] = np.eye(4)                          # and writes them back
    wo[4:, 4:] = -np.eye(4)                         # head 1: dims 4..7, negated
    wv[4:, 4:] = np.eye(4)
    set_weight(queue, attn.wv, wv)
    set_weight(queue, attn.wo, wo)
    assert copying_score(model, 0, 0) == pytest.approx(1.0)
    assert copying_score(model, 0, 1) == pytest.approx(-1.0)
    assert copying_fraction(ov_circuit(model, 0, 0)[:4]) == 1.0
    ov = ov_circuit(model, 0, 0)
    full = np.linalg.eigvals(ov)
    assert full.real.sum() / np.abs(full).sum() == pytest.approx(1.0)


def elhage(kind, Wq2, Wk2, Wv2, Wo2, Wv1, Wo1):
    """Elhage et al.'s scores in their column convention: W_OV = W_O W_V,
    W_QK = W_Q^T W_K, with their W = our W transposed."""
    OV1 = Wo1.T @ Wv1.T
    OV2 = Wo2.T @ Wv2.T
    QK2 = Wq2 @ Wk2.T           # = (W_Q^col)^T W_K^col
    prod = {"q": QK2.T @ OV1, "k": QK2 @ OV1, "v": OV2 @ OV1}[kind]
    first = {"q": QK2, "k": QK2, "v": OV2}[kind]
    return np.linalg.norm(prod) / (np.linalg.norm(first) * np.linalg.norm(OV1))


@pytest.mark.parametrize("kind", ["q", "k", "v"])
def test_composition_scores_of_random_weights_match_the_paper(queue, kind):
    model = tiny(queue, H=2, HKV=2, seed=3)
    got = composition_score(model, kind, sender=(0, 1), receiver=(1, 0))
    s, r = head_matrices(model, 0, 1), head_matrices(model, 1, 0)
    want = elhage(kind, r["W_Q"] / np.sqrt(8), r["W_K"], r["W_V"], r["W_O"],
                  s["W_V"], s["W_O"])
    assert got == pytest.approx(want, rel=1e-9)


def test_composition_of_hand_built_heads(queue):
    """The sender writes into dims 4..7; a receiver whose keys read those
    dims K-composes fully (score 1 when ranks match), one whose keys read
    dims 0..3 not at all; the queries read dims 0..3: no Q-composition."""
    D = 8
    ov1 = np.zeros((D, D))
    ov1[:4, 4:] = np.eye(4)                          # dims 0..3 -> 4..7
    wq = np.zeros((D, 4))
    wq[:4] = np.eye(4)                               # queries read 0..3
    wk_reads_sender = np.zeros((D, 4))
    wk_reads_sender[4:] = np.eye(4)
    assert compose("k", ov1, wq @ wk_reads_sender.T, None) == pytest.approx(0.5)
    assert compose("k", ov1, wq @ wq.T, None) == pytest.approx(0.0)
    assert compose("q", ov1, wq @ wk_reads_sender.T, None) == pytest.approx(0.0)
    # ranks 4 of 8: ||AB|| = 2 against ||A|| ||B|| = 4, so 0.5 is the most
    assert compose("v", ov1, None, ov1.T) == pytest.approx(0.5)


def test_the_random_baseline(queue):
    model = tiny(queue, H=2, HKV=2)
    mean, std = random_baseline(model, "k", draws=300, seed=1)
    again = random_baseline(model, "k", draws=300, seed=1)
    assert (mean, std) == again
    assert 0.05 < mean < 0.6 and 0 < std < mean
    trained_like = composition_score(model, "k", (0, 0), (1, 1))
    assert abs(trained_like - mean) < 5 * std        # init weights are random


def test_positional_scores_are_the_mean_over_token_pairs(queue):
    """positional_scores(k) is the mean of the QK circuit at offset k over
    every (query token, key token) pair."""
    model = tiny(queue, H=2, HKV=2, attn_only=True)
    got = positional_scores(model, 0, 0, range(4))
    want = [np.mean([qk_circuit(model, 0, 0, k)]) for k in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_bad_heads(queue):
    model = tiny(queue, H=2, HKV=2)
    with pytest.raises(ValueError, match=r"layer 2 in \(2, 0\)"):
        qk_matrix(model, 2, 0)
    with pytest.raises(ValueError, match=r"head 3 in \(0, 3\)"):
        copying_score(model, 0, 3)
    with pytest.raises(ValueError, match="must sit in a layer before"):
        composition_score(model, "k", (1, 0), (1, 1))
    with pytest.raises(ValueError, match="kind must be one of"):
        composition_score(model, "o", (0, 0), (1, 1))
