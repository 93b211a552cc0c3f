// SiLU (swish): out = x * sigmoid(x), on flat buffers of n values.

#include "exp_poly.cl"

// exp of a non-positive number only, so it never overflows for large |x|.
// (exp_poly: a builtin-free exp; the builtin is a function call on PoCL.)
inline float stable_sigmoid(float x) {
    if (x >= 0.0f) return 1.0f / (1.0f + exp_poly(-x));
    float e = exp_poly(x);
    return e / (1.0f + e);
}

__kernel void silu_forward(__global const float *x, __global float *out,
                           const int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    out[i] = x[i] * stable_sigmoid(x[i]);
}

// d/dx x s(x) = s + x s (1 - s) = s (1 + x (1 - s))
__kernel void silu_backward(__global const float *grad_out,
                            __global const float *x, __global float *grad_x,
                            const int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float s = stable_sigmoid(x[i]);
    grad_x[i] = grad_out[i] * s * (1.0f + x[i] * (1.0f - s));
}
