// Row-wise softmax over the last axis, with an optional causal mask.
//   x, y are (R, Sk): the R = (..., Sq) rows flattened; row r is query
//   i = r % Sq. Non-causal calls pass Sq = 1 and causal = 0.
// causal: query i sees key j only if j <= i + (Sk - Sq) (bottom-right
// aligned: Sq == Sk gives the lower triangle; one new query row at the end
// sees every key). When Sq > Sk the first rows see nothing: they give 0.
//
// Global size (R,): one work-item owns one row. Its max and its two sums
// (the forward's sum of exp, the backward's sum of grad_y * y) run in 8
// lanes (row_lanes.cl says how and why; cross_entropy.cl and rms_norm.cl
// sum the same way): the same bits on every run, and on PoCL both kernels
// ran about 3x faster than with one running sum.

#include "row_lanes.cl"   // row_max, row_exp_sum (with exp): in 8 lanes

// How many keys (a prefix of the row) query i may see.
int softmax_visible(int i, const int Sq, const int Sk, const int causal) {
    if (!causal) return Sk;
    int v = i + (Sk - Sq) + 1;
    return v < 0 ? 0 : (v > Sk ? Sk : v);
}

// y = exp(x - max) / sum(exp(x - max)) over the visible keys, 0 elsewhere.
// Subtracting the row max keeps exp() <= 1, so logits like 3e38 are safe.
__kernel void softmax_forward(__global const float *x, __global float *y,
                              const int R, const int Sq, const int Sk,
                              const int causal) {
    int r = get_global_id(0);
    if (r >= R) return;
    int seen = softmax_visible(r % Sq, Sq, Sk, causal);
    __global const float *xr = x + (long)r * Sk;
    __global float *yr = y + (long)r * Sk;
    float m = row_max(xr, seen);   // NaN when the row holds one
    // nothing visible (or all -inf): zeros; a NaN row stays NaN below
    if (m == -INFINITY) seen = 0;
    float s = row_exp_sum(xr, m, yr, seen);    // y = exp(x - m) for now
    // s >= 1 (the max itself adds exp(0)); a NaN anywhere makes s NaN
    for (int j = 0; j < seen; j++) yr[j] = yr[j] / s;
    for (int j = seen; j < Sk; j++) yr[j] = 0.0f;
}

// sum_j a[j] * b[j] over the n values, in 8 lanes (see the top).
float softmax_dot(__global const float *a, __global const float *b, int n) {
    int n8 = n - n % 8;
    float lane[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (int j0 = 0; j0 < n8; j0 += 8)
        for (int j = 0; j < 8; j++) lane[j] += a[j0 + j] * b[j0 + j];
    float sum = 0.0f;
    for (int j = 0; j < 8; j++) sum += lane[j];
    for (int j = n8; j < n; j++) sum += a[j] * b[j];
    return sum;
}

// grad_x = y * (grad_y - sum(grad_y * y)) per row; masked entries get 0.
// It needs only the forward's output y, not x.
__kernel void softmax_backward(__global const float *y,
                               __global const float *grad_y,
                               __global float *grad_x,
                               const int R, const int Sq, const int Sk,
                               const int causal) {
    int r = get_global_id(0);
    if (r >= R) return;
    int seen = softmax_visible(r % Sq, Sq, Sk, causal);
    __global const float *yr = y + (long)r * Sk;
    __global const float *gr = grad_y + (long)r * Sk;
    __global float *gx = grad_x + (long)r * Sk;
    float dot = softmax_dot(gr, yr, seen);
    for (int j = 0; j < seen; j++) gx[j] = yr[j] * (gr[j] - dot);
    for (int j = seen; j < Sk; j++) gx[j] = 0.0f;
}
