// SwiGLU's gate, fused: out = silu(a) * b = a * sigmoid(a) * b, on flat
// buffers of n values (a = x W_gate, b = x W_up; nn/feed_forward.py).
//
// The same formula as silu.cl followed by elementwise.cl's mul, in one pass:
// a and b are read once and silu(a) never goes to memory. In chapter 09's
// model that replaces 4 kernels per layer (2 forward, 2 backward) by 2, and
// one 2048 x 352 buffer. Measured there on PoCL: the forward's time is
// mostly the exp, the backward's mostly its 5 trips through memory.
// Work-items as in runs.cl: each owns a contiguous run of values
// (about 256 on a CPU, where the loop vectorizes; one on a GPU).

#include "sigmoid.cl"   // silu and stable_sigmoid, without builtins
#include "runs.cl"      // run_start, run_stop: a run of values each

__kernel void swiglu_forward(__global const float *a, __global const float *b,
                             __global float *out, const int n) {
    int start = run_start(n), stop = run_stop(n);
    for (int i = start; i < stop; i++)
        out[i] = silu(a[i]) * b[i];
}

// With s = sigmoid(a) and g = grad_out:
//   grad_b = g * silu(a) = g * (a * s)
//   grad_a = g * b * silu'(a) = (g * b) * s * (1 + a * (1 - s))   (silu.cl)
// The products are grouped as silu.cl and mul do them one after the other,
// so both routes give the same bits.
__kernel void swiglu_backward(__global const float *grad_out,
                              __global const float *a,
                              __global const float *b,
                              __global float *grad_a, __global float *grad_b,
                              const int n) {
    int start = run_start(n), stop = run_stop(n);
    for (int i = start; i < stop; i++) {
        float s = stable_sigmoid(a[i]);
        grad_b[i] = grad_out[i] * (a[i] * s);
        grad_a[i] = (grad_out[i] * b[i]) * s * (1.0f + a[i] * (1.0f - s));
    }
}
