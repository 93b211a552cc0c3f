// AdamW (Loshchilov & Hutter 2019), in place on one parameter tensor.
//   p, g, m, v are (n,): the value, its gradient, and Adam's two moments
//   p <- p * (1 - lr * wd)                        decoupled weight decay
//   m <- b1 * m + (1 - b1) * g                    running mean of g
//   v <- b2 * v + (1 - b2) * g * g                running mean of g^2
//   p <- p - (lr / c1) * m / (sqrt(v) / sqrt(c2) + eps)
// c1 = 1 - b1^t and c2 = 1 - b2^t undo the moments' bias towards 0 at step
// t (computed on the host in float64).
// Work-items as in runs.cl: each owns a contiguous run of values
// (about 256 on a CPU, where the loop vectorizes; one on a GPU).
//
// No backward kernel: an optimizer step is not differentiated.

// sqrt as one instruction. The OpenCL builtin sqrt is a function call on
// PoCL's pip build and kept the loop from vectorizing: adamw_step took 8x
// longer with it (0.22 ms instead of 0.03 for 131K values). On PoCL the
// host builds this file with -DINLINE_SQRT, which uses clang's
// __builtin_sqrtf, the same correctly rounded square root; every other
// driver gets the builtin (Oclgrind, for one, cannot run __builtin_sqrtf).
#include "runs.cl"      // run_start, run_stop: a run of values each

#ifdef INLINE_SQRT
#define SQRT(x) __builtin_sqrtf(x)
#else
#define SQRT(x) sqrt(x)
#endif

__kernel void adamw_step(__global float *p, __global const float *g,
                         __global float *m, __global float *v, const int n,
                         const float lr, const float b1, const float b2,
                         const float eps, const float wd,
                         const float c1, const float sqrt_c2) {
    int start = run_start(n), stop = run_stop(n);
    for (int i = start; i < stop; i++) {
        float gi = g[i];
        float mi = b1 * m[i] + (1.0f - b1) * gi;
        float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        float pi = p[i] * (1.0f - lr * wd);
        p[i] = pi - (lr / c1) * mi / (SQRT(vi) / sqrt_c2 + eps);
    }
}
