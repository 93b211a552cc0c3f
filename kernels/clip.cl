// Squared L2 norm of a gradient, pass 1 of 2 (pass 2 adds the partials on
// the host, in float64, over every parameter in a fixed order):
//   x is (n,); work-item p writes sum(x[i]^2, i in its chunk) to
//   partial[offset + p]. Sequential per work-item: the same bits each run.
//
// No backward kernel: clipping rescales gradients, it is not differentiated.

__kernel void sum_squares_partial(__global const float *x,
                                  __global float *partial, const int n,
                                  const int chunk, const int parts,
                                  const int offset) {
    int p = get_global_id(0);
    if (p >= parts) return;
    int start = p * chunk;
    int stop = min(start + chunk, n);
    float acc = 0.0f;
    for (int i = start; i < stop; i++) acc += x[i] * x[i];
    partial[offset + p] = acc;
}
