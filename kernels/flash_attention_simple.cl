// Flash attention, the plain version: the rung between chapter 08's Python
// loop and the fast kernel (flash_attention.cl). Same maths, no tricks:
// one work-item per row, one key at a time, no packing, no blocking.
//   q, o  are (BH, Sq, D) and (BH, Sq, DV)     BH = B * H query heads
//   k, v  are (BHKV, Sk, D) and (BHKV, Sk, DV)  H = HKV * rep
// GQA: query head bh reads kv head bh / rep.
// causal: query i sees key j iff j <= i + (Sk - Sq); a row that sees nothing
// gives zeros (kernels/softmax.cl's rule).
// window W > 0 (sliding-window attention; causal only): query i also sees
// no key W or more before its own position p = i + (Sk - Sq), so it sees
// p - W < j <= p; every loop below starts at that first key and skips the
// rest. window = 0: no window.
// scale = 1 / sqrt(D). Every work-item walks its keys in order, so the
// results are the same bits on every run.
// Sizes and indices are int; an offset that multiplies two of them is long
// (register_tile.cl's rule): row * D, for one, passes 2^31 - 1 when q holds
// more than 2^31 - 1 values.

#include "attention_row.cl"   // row_dot and online_step, with exp
                              // (decode.cl walks a row the same way)

// The last key query i may see (-1: none).
int last_visible(int i, const int Sq, const int Sk, const int causal) {
    int last = causal ? i + (Sk - Sq) : Sk - 1;
    return last < Sk - 1 ? last : Sk - 1;
}

// The first key query i may see: 0, or the oldest key inside its window.
int first_visible(int i, const int Sq, const int Sk, const int window) {
    int first = window > 0 ? i + (Sk - Sq) - window + 1 : 0;
    return first > 0 ? first : 0;
}

// Forward, one work-item per query row (bh, i): the online softmax
// (attention_row.cl's step).
//   m: the largest score so far; l: the sum of exp(s_j - m) so far;
//   o: the sum of exp(s_j - m) v_j so far (kept in the output row itself).
// A larger score rescales l and o by exp(m_old - m_new). At the end
// o / l is the softmax-weighted mean of v, and lse = m + log(l) is the one
// number per row the backward needs to rebuild any weight p_j.
__kernel void flash_attention_simple_forward(
        __global const float *q, __global const float *k,
        __global const float *v, __global float *out, __global float *lse,
        const int BH, const int rep, const int Sq, const int Sk,
        const int D, const int DV, const float scale, const int causal,
        const int window) {
    int row = get_global_id(0);                  // bh * Sq + i
    if (row >= BH * Sq) return;
    int bh = row / Sq, i = row % Sq;
    __global const float *qi = q + (long)row * D;              // (D,)
    __global const float *kh = k + (long)(bh / rep) * Sk * D;  // (Sk, D)
    __global const float *vh = v + (long)(bh / rep) * Sk * DV; // (Sk, DV)
    __global float *o = out + (long)row * DV;                  // (DV,)
    int last = last_visible(i, Sq, Sk, causal);
    float m = -INFINITY, l = 0.0f;
    for (int c = 0; c < DV; c++) o[c] = 0.0f;
    for (int j = first_visible(i, Sq, Sk, window); j <= last; j++) {
        float s = row_dot(qi, kh + (long)j * D, D) * scale;  // q_i . k_j / sqrt(D)
        online_step(s, vh + (long)j * DV, DV, &m, &l, o);
    }
    for (int c = 0; c < DV; c++) o[c] = l > 0.0f ? o[c] / l : 0.0f;
    lse[row] = l > 0.0f ? m + log(l) : -INFINITY;
}

// Backward, FlashAttention-2 style: each weight is rebuilt from lse,
//   p_ij = exp(s_ij - lse_i),  dp_ij = dO_i . v_j,
//   ds_ij = p_ij (dp_ij - delta_i)  with  delta_i = dO_i . O_i,
//   dq_i = scale * sum_j ds_ij k_j,  dk_j = scale * sum_i ds_ij q_i,
//   dv_j = sum_i p_ij dO_i.
// Two kernels, so that each work-item writes only its own row: one per
// query row (dq, and delta for the second), one per key row (dk, dv).
__kernel void flash_attention_simple_backward_dq(
        __global const float *q, __global const float *k,
        __global const float *v, __global const float *out,
        __global const float *grad_out, __global const float *lse,
        __global float *grad_q, __global float *delta,
        const int BH, const int rep, const int Sq, const int Sk,
        const int D, const int DV, const float scale, const int causal,
        const int window) {
    int row = get_global_id(0);                  // bh * Sq + i
    if (row >= BH * Sq) return;
    int bh = row / Sq, i = row % Sq;
    __global const float *qi = q + (long)row * D;              // (D,)
    __global const float *kh = k + (long)(bh / rep) * Sk * D;  // (Sk, D)
    __global const float *vh = v + (long)(bh / rep) * Sk * DV; // (Sk, DV)
    __global const float *oi = out + (long)row * DV;           // (DV,)
    __global const float *doi = grad_out + (long)row * DV;     // (DV,)
    __global float *dqi = grad_q + (long)row * D;              // (D,)
    float d_i = 0.0f;
    for (int c = 0; c < DV; c++) d_i += doi[c] * oi[c];
    delta[row] = d_i;
    for (int c = 0; c < D; c++) dqi[c] = 0.0f;
    int last = last_visible(i, Sq, Sk, causal);
    for (int j = first_visible(i, Sq, Sk, window); j <= last; j++) {
        float s = row_dot(qi, kh + (long)j * D, D);
        float dp = row_dot(doi, vh + (long)j * DV, DV);
        float p = exp(s * scale - lse[row]);
        float ds = p * (dp - d_i);
        for (int c = 0; c < D; c++) dqi[c] += ds * scale * kh[(long)j * D + c];
    }
}

// One work-item per key row (bkv, j): it sums over the rep query heads that
// read kv head bkv, and over the query rows that see key j.
__kernel void flash_attention_simple_backward_dkv(
        __global const float *q, __global const float *k,
        __global const float *v, __global const float *grad_out,
        __global const float *lse, __global const float *delta,
        __global float *grad_k, __global float *grad_v,
        const int BHKV, const int rep, const int Sq, const int Sk,
        const int D, const int DV, const float scale, const int causal,
        const int window) {
    int row = get_global_id(0);                  // bkv * Sk + j
    if (row >= BHKV * Sk) return;
    int bkv = row / Sk, j = row % Sk;
    __global const float *kj = k + (long)row * D;              // (D,)
    __global const float *vj = v + (long)row * DV;             // (DV,)
    __global float *dkj = grad_k + (long)row * D;              // (D,)
    __global float *dvj = grad_v + (long)row * DV;             // (DV,)
    for (int c = 0; c < D; c++) dkj[c] = 0.0f;
    for (int c = 0; c < DV; c++) dvj[c] = 0.0f;
    int first = causal ? j - (Sk - Sq) : 0;      // the first row that sees j
    if (first < 0) first = 0;
    int stop = Sq;                               // past the last row that sees j
    if (window > 0 && j - (Sk - Sq) + window < Sq) stop = j - (Sk - Sq) + window;
    for (int bh = bkv * rep; bh < (bkv + 1) * rep; bh++) {
        for (int i = first; i < stop; i++) {
            int r = bh * Sq + i;
            __global const float *qi = q + (long)r * D;          // (D,)
            __global const float *doi = grad_out + (long)r * DV; // (DV,)
            float s = row_dot(qi, kj, D), dp = row_dot(doi, vj, DV);
            float p = exp(s * scale - lse[r]);
            float ds = p * (dp - delta[r]);
            for (int c = 0; c < DV; c++) dvj[c] += p * doi[c];
            for (int c = 0; c < D; c++) dkj[c] += ds * scale * qi[c];
        }
    }
}
