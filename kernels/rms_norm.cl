// RMS normalisation (as in LLaMA): no mean subtraction, no bias.
//   x is (R, D), weight is (D,), out is (R, D), rstd is (R,)
//   rstd[r] = 1 / sqrt(mean_j x[r, j]^2 + eps),  out = x * rstd * weight
// One work-item per row, summing sequentially (deterministic).

__kernel void rms_norm_forward(__global const float *x,
                               __global const float *weight,
                               __global float *out, __global float *rstd,
                               const int R, const int D, const float eps) {
    int r = get_global_id(0);
    if (r >= R) return;
    __global const float *xr = x + r * D;
    float ss = 0.0f;
    for (int j = 0; j < D; j++) ss += xr[j] * xr[j];
    float inv = rsqrt(ss / D + eps);
    rstd[r] = inv;
    for (int j = 0; j < D; j++) out[r * D + j] = xr[j] * inv * weight[j];
}

// grad_x = rstd * (g w - x * rstd^2 * sum_k(g_k w_k x_k) / D), row by row.
__kernel void rms_norm_backward(__global const float *grad_out,
                                __global const float *x,
                                __global const float *weight,
                                __global const float *rstd,
                                __global float *grad_x,
                                const int R, const int D) {
    int r = get_global_id(0);
    if (r >= R) return;
    __global const float *xr = x + r * D;
    __global const float *gr = grad_out + r * D;
    float inv = rstd[r];
    float dot = 0.0f;
    for (int j = 0; j < D; j++) dot += gr[j] * weight[j] * xr[j];
    float k = inv * inv * dot / D;
    for (int j = 0; j < D; j++)
        grad_x[r * D + j] = inv * (gr[j] * weight[j] - xr[j] * k);
}

// grad_weight[j] = sum_r grad_out[r, j] * x[r, j] * rstd[r]:
// work-item j owns column j and walks the rows in order (no atomics).
__kernel void rms_norm_backward_weight(__global const float *grad_out,
                                       __global const float *x,
                                       __global const float *rstd,
                                       __global float *grad_weight,
                                       const int R, const int D) {
    int j = get_global_id(0);
    if (j >= D) return;
    float acc = 0.0f;
    for (int r = 0; r < R; r++) acc += grad_out[r * D + j] * x[r * D + j] * rstd[r];
    grad_weight[j] = acc;
}
