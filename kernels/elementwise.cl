// Elementwise ops on flat float32 buffers of n values.
//
// Each work-item owns one contiguous run of values (runs.cl says why).

#include "runs.cl"

// out = a + b
__kernel void add_forward(__global const float *a, __global const float *b,
                          __global float *out, const int n) {
    int start = run_start(n), stop = run_stop(n);
    for (int i = start; i < stop; i++) out[i] = a[i] + b[i];
}
// add_backward is the identity: d(a + b)/da = d(a + b)/db = 1,
// so the Python side hands grad_out to both inputs without a kernel.

// out = a * b
__kernel void mul_forward(__global const float *a, __global const float *b,
                          __global float *out, const int n) {
    int start = run_start(n), stop = run_stop(n);
    for (int i = start; i < stop; i++) out[i] = a[i] * b[i];
}

// grad_a = grad_out * b,  grad_b = grad_out * a
__kernel void mul_backward(__global const float *grad_out,
                           __global const float *a, __global const float *b,
                           __global float *grad_a, __global float *grad_b,
                           const int n) {
    int start = run_start(n), stop = run_stop(n);
    for (int i = start; i < stop; i++) {
        grad_a[i] = grad_out[i] * b[i];
        grad_b[i] = grad_out[i] * a[i];
    }
}

// out = c * x   (its backward is the same kernel: grad_x = c * grad_out)
__kernel void scale_forward(__global const float *x, __global float *out,
                            const float c, const int n) {
    int start = run_start(n), stop = run_stop(n);
    for (int i = start; i < stop; i++) out[i] = c * x[i];
}
