// SiLU (swish): out = x * sigmoid(x), on flat buffers of n values.
// Work-items as in runs.cl: each owns a contiguous run of values
// (about 256 on a CPU, where the loop vectorizes; one on a GPU).

#include "sigmoid.cl"   // silu and stable_sigmoid, without builtins
#include "runs.cl"      // run_start, run_stop: a run of values each

__kernel void silu_forward(__global const float *x, __global float *out,
                           const int n) {
    int start = run_start(n), stop = run_stop(n);
    for (int i = start; i < stop; i++) out[i] = silu(x[i]);
}

// d/dx x s(x) = s + x s (1 - s) = s (1 + x (1 - s))
__kernel void silu_backward(__global const float *grad_out,
                            __global const float *x, __global float *grad_x,
                            const int n) {
    int start = run_start(n), stop = run_stop(n);
    for (int i = start; i < stop; i++) {
        float s = stable_sigmoid(x[i]);
        grad_x[i] = grad_out[i] * s * (1.0f + x[i] * (1.0f - s));
    }
}
