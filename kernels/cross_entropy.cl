// Cross-entropy of softmax(logits) against integer targets.
//   logits is (N, V), targets is (N,) int32 in [0, V) (checked on the host),
//   loss is (N,): loss[n] = logsumexp(logits[n]) - logits[n, targets[n]],
//   row_max, row_sum are (N,): m = max_v logits[n, v] and
//   s = sum_v exp(logits[n, v] - m), kept for the backward.
// The host averages loss over the N rows.
//
// Stability: subtracting the row max keeps every exp <= 1, so huge logits
// neither overflow nor turn into inf - inf = NaN. We never form
// lse = m + log(s) either: with m = 3e4 its float32 rounding (ulp 2e-3)
// would shift every probability exp(x - lse) by ~1e-3 relative. Instead
//   loss = log(s) - (x_t - m)   and   softmax = exp(x - m) / s,
// where x - m is exact whenever x is near the max (the terms that matter).

#include "exp_poly.cl"   // exp without a builtin call (PoCL), see there

// One work-item per row.
__kernel void cross_entropy_forward(__global const float *logits,
                                    __global const int *targets,
                                    __global float *loss,
                                    __global float *row_max,
                                    __global float *row_sum,
                                    const int N, const int V) {
    int n = get_global_id(0);
    if (n >= N) return;
    __global const float *x = logits + (long)n * V;
    float m = x[0];
    for (int v = 1; v < V; v++) m = x[v] > m ? x[v] : m;   // fmax, inline
    // s = sum of exp(x - m), added in order v = 0, 1, ...; the exps are
    // computed 64 at a time into e first, a loop the compiler vectorizes
    float s = 0.0f;
    float e[64];
    int v0 = 0;
    for (; v0 + 64 <= V; v0 += 64) {
        for (int j = 0; j < 64; j++) e[j] = exp_poly(x[v0 + j] - m);
        for (int j = 0; j < 64; j++) s += e[j];
    }
    for (int v = v0; v < V; v++) s += exp_poly(x[v] - m);
    row_max[n] = m;
    row_sum[n] = s;
    loss[n] = log(s) - (x[targets[n]] - m);
}

// grad_logits[n, v] = (softmax[n, v] - (v == targets[n])) * grad_out / N,
// with softmax = exp(logit - m) / s; inv_n = 1 / N.
// One work-item per row, as the forward: the loop over v has no reduction,
// so the compiler vectorizes it (one work-item per value was 5x slower).
__kernel void cross_entropy_backward(__global const float *grad_out,
                                     __global const float *logits,
                                     __global const int *targets,
                                     __global const float *row_max,
                                     __global const float *row_sum,
                                     __global float *grad_logits,
                                     const int N, const int V,
                                     const float inv_n) {
    int n = get_global_id(0);
    if (n >= N) return;
    __global const float *x = logits + (long)n * V;
    __global float *gx = grad_logits + (long)n * V;
    float m = row_max[n], s = row_sum[n], g = grad_out[0];
    int t = targets[n];
    for (int v = 0; v < V; v++) {
        float p = exp_poly(x[v] - m) / s;
        float onehot = (v == t) ? 1.0f : 0.0f;
        gx[v] = (p - onehot) * g * inv_n;
    }
}
