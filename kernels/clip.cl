// Squared L2 norm of a gradient, pass 1 of 2 (pass 2 adds the partials on
// the host, in float64, over every parameter in a fixed order):
//   x is (n,); work-item p writes sum(x[i]^2, i in its chunk) to
//   partial[offset + p]. The same bits each run.
// Within its chunk a work-item adds in 8 lanes (lane j takes the values
// j, j + 8, ... of the chunk), then adds the lanes: the compiler turns them
// into one SIMD register, and 8 independent sums run 8x faster than one
// chain of dependent additions.
//
// No backward kernel: clipping rescales gradients, it is not differentiated.

__kernel void sum_squares_partial(__global const float *x,
                                  __global float *partial, const int n,
                                  const int chunk, const int parts,
                                  const int offset) {
    int p = get_global_id(0);
    if (p >= parts) return;
    int start = p * chunk;
    int stop = start + chunk < n ? start + chunk : n;
    float lane[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    int i = start;
    for (; i + 8 <= stop; i += 8)
        for (int j = 0; j < 8; j++) lane[j] += x[i + j] * x[i + j];
    float acc = 0.0f;
    for (int j = 0; j < 8; j++) acc += lane[j];
    for (; i < stop; i++) acc += x[i] * x[i];
    partial[offset + p] = acc;
}
