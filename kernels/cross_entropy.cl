// Cross-entropy of softmax(logits) against integer targets.
//   logits is (N, V), targets is (N,) int32 in [0, V) (checked on the host),
//   loss is (N,): loss[n] = logsumexp(logits[n]) - logits[n, targets[n]],
//   row_sum is (N,): s = sum_v exp(logits[n, v] - m), m = max_v logits[n, v],
//   exps is (N, V): exp(logits[n, v] - m); both kept for the backward, which
//   then needs no exp (the exps were most of its time).
// The host averages loss over the N rows.
//
// Stability: subtracting the row max keeps every exp <= 1, so huge logits
// neither overflow nor turn into inf - inf = NaN. We never form
// lse = m + log(s) either: with m = 3e4 its float32 rounding (ulp 2e-3)
// would shift every probability exp(x - lse) by ~1e-3 relative. Instead
//   loss = log(s) - (x_t - m)   and   softmax = exp(x - m) / s,
// where x - m is exact whenever x is near the max (the terms that matter).

#include "exp_poly.cl"   // exp without a builtin call (PoCL), see there
#define ROW_EXP exp_poly    // row_lanes.cl's exp: builtin-free
#include "row_lanes.cl"  // row_max, row_exp_sum: in 8 lanes

// One work-item per row. The max and the sum run in 8 lanes (row_lanes.cl):
// the same bits every run, and the 8 sums are independent chains of
// additions, where one running sum was a chain of V dependent additions
// (4 cycles each) that took most of the kernel's time.
__kernel void cross_entropy_forward(__global const float *logits,
                                    __global const int *targets,
                                    __global float *loss,
                                    __global float *row_sum,
                                    __global float *exps,
                                    const int N, const int V) {
    int n = get_global_id(0);
    if (n >= N) return;
    __global const float *x = logits + (long)n * V;
    __global float *e = exps + (long)n * V;
    float m = row_max(x, V);
    float s = row_exp_sum(x, m, e, V);     // e = exp(x - m), s their sum
    row_sum[n] = s;
    loss[n] = log(s) - (x[targets[n]] - m);
}

// grad_logits[n, v] = (softmax[n, v] - (v == targets[n])) * grad_out / N,
// with softmax = exps / s (the forward's); inv_n = 1 / N. Written as
//   exps * c,  c = grad_out / (N s),  then  -grad_out / N  at v = t:
// one division per row instead of one per value.
// One work-item per row, as the forward: the loop over v has no reduction,
// so the compiler vectorizes it (one work-item per value was 5x slower).
__kernel void cross_entropy_backward(__global const float *grad_out,
                                     __global const float *exps,
                                     __global const int *targets,
                                     __global const float *row_sum,
                                     __global float *grad_logits,
                                     const int N, const int V,
                                     const float inv_n) {
    int n = get_global_id(0);
    if (n >= N) return;
    __global const float *e = exps + (long)n * V;
    __global float *gx = grad_logits + (long)n * V;
    float g = grad_out[0] * inv_n;
    float c = g / row_sum[n];
    for (int v = 0; v < V; v++) gx[v] = e[v] * c;
    gx[targets[n]] -= g;                    // the one-hot term
}
