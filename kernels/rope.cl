// Rotary position embedding (RoPE), chapter 06.
//   x is (R, S, d): R folds every leading dim (B, H, ...), d = 2 * pairs.
//   Pair i of the row at sequence index s is (x[2i], x[2i+1]); it sits at
//   position m = offset + s and turns by the angle scale * m * theta_i, where
//   theta_i = base^(-2i / d) and scale is 1 for plain RoPE (chapter 12: a
//   scale below 1 is position interpolation, 0 turns nothing, no positions):
//       out0 = x0 cos - x1 sin,      out1 = x0 sin + x1 cos.
//
// Three kernels: rope_table computes (cos, sin) once per (s, i), then
// rope_forward / rope_backward rotate every row of every head with it.
//
// Why the angle is computed in double: m * theta_i in float32 is off by about
// m * 6e-8 rad (the rounding of theta_i and of the product both grow with m),
// so at m = 4000 the angle is already wrong by ~1e-4 rad and q.k no longer
// depends on the relative position alone to float32 precision (chapter 06
// plots this). With cl_khr_fp64 (PoCL CPU and most GPUs have it) theta_i,
// the product and cos/sin are double and only the final cos/sin are rounded
// to float, once. Devices without fp64 fall back to float angles; building
// with -D ROPE_FLOAT_ANGLES forces that path (the tests compare the two).

#include "rope_pair.cl"   // rope_pair: one pair's rotation (decode.cl uses it too)

#if defined(cl_khr_fp64) && !defined(ROPE_FLOAT_ANGLES)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double angle_t;
#else
typedef float angle_t;
#endif

// table is (S, pairs, 2): (cos, sin) of scale * (offset + s) * theta_i.
// base = base_hi + base_lo: a float pair, so a double path sees the host's
// double base to ~48 bits while kernel arguments stay 32-bit.
__kernel void rope_table(__global float *table, const int S, const int pairs,
                         const int offset, const float base_hi,
                         const float base_lo, const float scale) {
    int p = get_global_id(0);          // p = s * pairs + i
    if (p >= S * pairs) return;
    int s = p / pairs;
    int i = p - s * pairs;
    angle_t base = (angle_t)base_hi + (angle_t)base_lo;
    angle_t theta = pow(base, -(angle_t)(2 * i) / (angle_t)(2 * pairs));
    angle_t angle = (angle_t)scale * (angle_t)(offset + s) * theta;
    table[2L * p] = (float)cos(angle);     // long, as the rows below
    table[2L * p + 1] = (float)sin(angle);
}

// x, out are (rows, pairs, 2), rows = R * S; one work-item rotates the
// pairs of one row (the division that finds the row's position is paid
// once per row, not once per pair: 2x faster on a CPU).
__kernel void rope_forward(__global const float *x,
                           __global const float *table, __global float *out,
                           const int rows, const int S, const int pairs) {
    int row = get_global_id(0);        // row = r * S + s
    if (row >= rows) return;
    __global const float *cs = table + 2L * (row % S) * pairs;  // (cos, sin)
    __global const float *xr = x + 2L * row * pairs;
    __global float *o = out + 2L * row * pairs;
    for (int i = 0; i < pairs; i++) {
        float2 r = rope_pair(xr[2 * i], xr[2 * i + 1], cs[2 * i], cs[2 * i + 1]);
        o[2 * i] = r.x;
        o[2 * i + 1] = r.y;
    }
}

// A rotation's transpose is its inverse: grad_x turns grad_out by -angle.
__kernel void rope_backward(__global const float *grad_out,
                            __global const float *table,
                            __global float *grad_x,
                            const int rows, const int S, const int pairs) {
    int row = get_global_id(0);
    if (row >= rows) return;
    __global const float *cs = table + 2L * (row % S) * pairs;
    __global const float *gr = grad_out + 2L * row * pairs;
    __global float *gx = grad_x + 2L * row * pairs;
    for (int i = 0; i < pairs; i++) {              // the angle's sine negated
        float2 r = rope_pair(gr[2 * i], gr[2 * i + 1], cs[2 * i], -cs[2 * i + 1]);
        gx[2 * i] = r.x;
        gx[2 * i + 1] = r.y;
    }
}
