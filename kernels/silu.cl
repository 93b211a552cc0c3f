// SiLU (swish): out = x * sigmoid(x), on flat buffers of n values.
// Work-items as in elementwise.cl: each owns a contiguous run of values
// (about 256 on a CPU, where the loop vectorizes; one on a GPU).

#include "sigmoid.cl"   // stable_sigmoid, without builtins

__kernel void silu_forward(__global const float *x, __global float *out,
                           const int n) {
    int chunk = (n + get_global_size(0) - 1) / get_global_size(0);
    int start = get_global_id(0) * chunk;
    int stop = start + chunk < n ? start + chunk : n;
    for (int i = start; i < stop; i++) out[i] = x[i] * stable_sigmoid(x[i]);
}

// d/dx x s(x) = s + x s (1 - s) = s (1 + x (1 - s))
__kernel void silu_backward(__global const float *grad_out,
                            __global const float *x, __global float *grad_x,
                            const int n) {
    int chunk = (n + get_global_size(0) - 1) / get_global_size(0);
    int start = get_global_id(0) * chunk;
    int stop = start + chunk < n ? start + chunk : n;
    for (int i = start; i < stop; i++) {
        float s = stable_sigmoid(x[i]);
        grad_x[i] = grad_out[i] * s * (1.0f + x[i] * (1.0f - s));
    }
}
