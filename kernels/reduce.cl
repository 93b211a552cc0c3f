// sum(x) over all n values, in two deterministic passes (no atomics):
//   pass 1: work-item p adds the contiguous chunk [p*chunk, (p+1)*chunk)
//   pass 2: one work-item adds the P partial sums in order.
// The same inputs always give the same bits, on any thread count.

__kernel void sum_partial(__global const float *x, __global float *partial,
                          const int n, const int chunk, const int parts) {
    int p = get_global_id(0);
    if (p >= parts) return;
    int start = p * chunk;
    int stop = min(start + chunk, n);
    float acc = 0.0f;
    for (int i = start; i < stop; i++) acc += x[i];
    partial[p] = acc;
}

__kernel void sum_final(__global const float *partial, __global float *out,
                        const int parts) {
    if (get_global_id(0) != 0) return;
    float acc = 0.0f;
    for (int p = 0; p < parts; p++) acc += partial[p];
    out[0] = acc;
}

// grad_x[i] = grad_out[0]: every input value moved the sum by 1.
__kernel void sum_backward(__global const float *grad_out,
                           __global float *grad_x, const int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    grad_x[i] = grad_out[0];
}
