// The simple rung of the quantised kernels: one work-item per output
// value, each weight decoded where it is used (quant_format.cl). They are
// the oracle of the fast kernels (quant.cl) and the version to read first.
#include "quant_format.cl"

// ---------------------------------------------------------------------------
// W as float32: out (rows, cols) = the weights of W (rows, cols).
// Global size (cols, rows).
// ---------------------------------------------------------------------------
__kernel void quant_dequantize(__global const half *scales,
                               __global const uchar *quants,
                               __global float *out, const int qtype,
                               const int rows, const int cols) {
    int c = get_global_id(0), r = get_global_id(1);
    if (c >= cols || r >= rows) return;
    out[(long)r * cols + c] = quant_weight(qtype, scales, quants, r, c, cols);
}

// ---------------------------------------------------------------------------
// Forward: y (M, rows) = x (M, cols) @ W^T, W (rows, cols) quantised.
//     y[m, r] = sum_c x[m, c] * W[r, c]
// Global size (rows, M).
// ---------------------------------------------------------------------------
__kernel void quant_matmul_simple(__global const float *x,
                                  __global const half *scales,
                                  __global const uchar *quants,
                                  __global float *y, const int qtype,
                                  const int M, const int rows,
                                  const int cols) {
    int r = get_global_id(0), m = get_global_id(1);
    if (r >= rows || m >= M) return;
    __global const float *xm = x + (long)m * cols;
    float acc = 0.0f;
    for (int c = 0; c < cols; c++)
        acc += xm[c] * quant_weight(qtype, scales, quants, r, c, cols);
    y[(long)m * rows + r] = acc;
}

// ---------------------------------------------------------------------------
// Backward, the input's gradient: dx (M, cols) = dy (M, rows) @ W.
//     dx[m, c] = sum_r dy[m, r] * W[r, c]       (no weight gradient)
// Global size (cols, M).
// ---------------------------------------------------------------------------
__kernel void quant_matmul_t_simple(__global const float *dy,
                                    __global const half *scales,
                                    __global const uchar *quants,
                                    __global float *dx, const int qtype,
                                    const int M, const int rows,
                                    const int cols) {
    int c = get_global_id(0), m = get_global_id(1);
    if (c >= cols || m >= M) return;
    __global const float *dym = dy + (long)m * rows;
    float acc = 0.0f;
    for (int r = 0; r < rows; r++)
        acc += dym[r] * quant_weight(qtype, scales, quants, r, c, cols);
    dx[(long)m * cols + c] = acc;
}
