// RMS normalisation (as in LLaMA): no mean subtraction, no bias.
//   x is (R, D), weight is (D,), out is (R, D), rstd is (R,)
//   rstd[r] = 1 / sqrt(mean_j x[r, j]^2 + eps),  out = x * rstd * weight
// One work-item per row, summing in a fixed order (deterministic).
//
// A row's sums run in 8 lanes: lane j adds the values j, j + 8, j + 16, ...,
// and the lanes are added at the end. The compiler turns the lanes into one
// SIMD register, and the 8 running sums are independent: a single running
// sum is a chain of D dependent additions, which set the kernels' speed.

#include "rms_row.cl"   // row_rstd: 1 / rms of a row (decode.cl uses it too)

// sum_j a[j] * b[j] * c[j] over D values, in 8 lanes (c may equal b).
inline float dot3(__global const float *a, __global const float *b,
                  __global const float *c, int D) {
    float lane[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    int d8 = D - D % 8;
    for (int j0 = 0; j0 < d8; j0 += 8)
        for (int j = 0; j < 8; j++)
            lane[j] += a[j0 + j] * b[j0 + j] * c[j0 + j];
    float sum = 0.0f;
    for (int j = 0; j < 8; j++) sum += lane[j];
    for (int j = d8; j < D; j++) sum += a[j] * b[j] * c[j];
    return sum;
}

__kernel void rms_norm_forward(__global const float *x,
                               __global const float *weight,
                               __global float *out, __global float *rstd,
                               const int R, const int D, const float eps) {
    int r = get_global_id(0);
    if (r >= R) return;
    __global const float *xr = x + (long)r * D;
    __global float *outr = out + (long)r * D;
    float inv = row_rstd(xr, D, eps);        // rms_row.cl, in 8 lanes
    rstd[r] = inv;
    for (int j = 0; j < D; j++) outr[j] = xr[j] * inv * weight[j];
}

// Both gradients in one pass over grad_out and x. Work-item b owns the rows
// [b * rows, (b + 1) * rows) (fewer in the last block):
//   grad_x = rstd * (g w - x * rstd^2 * sum_k(g_k w_k x_k) / D), row by row;
//   partial[b, j] = sum over its rows r of g[r, j] * x[r, j] * rstd[r],
// its share of grad_weight, added up by rms_norm_backward_weight below.
// (grad_weight used to be a second pass over g and x, one work-item per
// column, each walking R rows in one chain of dependent additions.)
__kernel void rms_norm_backward(__global const float *grad_out,
                                __global const float *x,
                                __global const float *weight,
                                __global const float *rstd,
                                __global float *grad_x,
                                __global float *partial,
                                const int R, const int D, const int rows) {
    int b = get_global_id(0);
    int r0 = b * rows;
    if (r0 >= R) return;
    int r1 = r0 + rows < R ? r0 + rows : R;
    __global float *pb = partial + (long)b * D;            // (D,)
    for (int j = 0; j < D; j++) pb[j] = 0.0f;
    for (int r = r0; r < r1; r++) {
        __global const float *xr = x + (long)r * D;
        __global const float *gr = grad_out + (long)r * D;
        __global float *gxr = grad_x + (long)r * D;
        float inv = rstd[r];
        float k = inv * inv * dot3(gr, weight, xr, D) / D;
        for (int j = 0; j < D; j++) {
            gxr[j] = inv * (gr[j] * weight[j] - xr[j] * k);
            pb[j] += gr[j] * xr[j] * inv;
        }
    }
}

// grad_weight[j] = sum_b partial[b, j] over the blocks b = 0, 1, ...
// partial is (blocks, D); work-item j owns column j (no atomics).
__kernel void rms_norm_backward_weight(__global const float *partial,
                                       __global float *grad_weight,
                                       const int blocks, const int D) {
    int j = get_global_id(0);
    if (j >= D) return;
    float acc = 0.0f;
    for (int b = 0; b < blocks; b++) acc += partial[(long)b * D + j];
    grad_weight[j] = acc;
}
