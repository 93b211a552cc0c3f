// Row-wise softmax over the last axis, with an optional causal mask.
//   x, y are (R, Sk): the R = (..., Sq) rows flattened; row r is query
//   i = r % Sq. Non-causal calls pass Sq = 1 and causal = 0.
// causal: query i sees key j only if j <= i + (Sk - Sq) (bottom-right
// aligned: Sq == Sk gives the lower triangle; one new query row at the end
// sees every key). When Sq > Sk the first rows see nothing: they give 0.
//
// Global size (R,): one work-item owns one row and walks it sequentially,
// so results are the same bits on every run.

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
    float m = -INFINITY;
    int nan = 0;                   // a NaN never wins "x > m": note it apart
    for (int j = 0; j < seen; j++) {
        m = xr[j] > m ? xr[j] : m;
        nan |= isnan(xr[j]);
    }
    // nothing visible (or all -inf): zeros; a NaN row stays NaN below
    if (m == -INFINITY && !nan) seen = 0;
    float s = 0.0f;
    for (int j = 0; j < seen; j++) {
        float e = exp(xr[j] - m);
        yr[j] = e;
        s += e;                    // s >= 1: the max itself adds exp(0)
    }
    for (int j = 0; j < seen; j++) yr[j] = yr[j] / s;
    for (int j = seen; j < Sk; j++) yr[j] = 0.0f;
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
    float dot = 0.0f;
    for (int j = 0; j < seen; j++) dot += gr[j] * yr[j];
    for (int j = 0; j < seen; j++) gx[j] = yr[j] * (gr[j] - dot);
    for (int j = seen; j < Sk; j++) gx[j] = 0.0f;
}
