// AdamW (Loshchilov & Hutter 2019), in place on one parameter tensor.
//   p, g, m, v are (n,): the value, its gradient, and Adam's two moments
//   p <- p * (1 - lr * wd)                        decoupled weight decay
//   m <- b1 * m + (1 - b1) * g                    running mean of g
//   v <- b2 * v + (1 - b2) * g * g                running mean of g^2
//   p <- p - (lr / c1) * m / (sqrt(v) / sqrt(c2) + eps)
// c1 = 1 - b1^t and c2 = 1 - b2^t undo the moments' bias towards 0 at step
// t (computed on the host in float64). One work-item per value.
//
// No backward kernel: an optimizer step is not differentiated.

__kernel void adamw_step(__global float *p, __global const float *g,
                         __global float *m, __global float *v, const int n,
                         const float lr, const float b1, const float b2,
                         const float eps, const float wd,
                         const float c1, const float sqrt_c2) {
    int i = get_global_id(0);
    if (i >= n) return;
    float gi = g[i];
    float mi = b1 * m[i] + (1.0f - b1) * gi;
    float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    float pi = p[i] * (1.0f - lr * wd);
    p[i] = pi - (lr / c1) * mi / (sqrt(vi) / sqrt_c2 + eps);
}
