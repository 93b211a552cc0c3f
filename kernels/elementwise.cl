// Elementwise ops on flat float32 buffers of n values.
//
// Each work-item owns one contiguous run of values, [start, stop), the n
// values split evenly over the work-items launched (the global size, padding
// included; the host chooses it, core/tensor_ops.py: work_items):
//   - on a CPU about 256 values each: the loop over them is a plain loop,
//     which the compiler turns into SIMD (8 or 16 values per instruction).
//     One value per work-item, as on a GPU, ran 5-10x slower on PoCL: its
//     work-group loop did not vectorize, and each work-item costs overhead.
//   - on a GPU one value each (start = id, stop = id + 1): neighbouring
//     work-items then read neighbouring addresses, as a GPU wants.
// Padding work-items get an empty run (start >= n), so none checks its id.

// out = a + b
__kernel void add_forward(__global const float *a, __global const float *b,
                          __global float *out, const int n) {
    int chunk = (n + get_global_size(0) - 1) / get_global_size(0);
    int start = get_global_id(0) * chunk;
    int stop = start + chunk < n ? start + chunk : n;
    for (int i = start; i < stop; i++) out[i] = a[i] + b[i];
}
// add_backward is the identity: d(a + b)/da = d(a + b)/db = 1,
// so the Python side hands grad_out to both inputs without a kernel.

// out = a * b
__kernel void mul_forward(__global const float *a, __global const float *b,
                          __global float *out, const int n) {
    int chunk = (n + get_global_size(0) - 1) / get_global_size(0);
    int start = get_global_id(0) * chunk;
    int stop = start + chunk < n ? start + chunk : n;
    for (int i = start; i < stop; i++) out[i] = a[i] * b[i];
}

// grad_a = grad_out * b,  grad_b = grad_out * a
__kernel void mul_backward(__global const float *grad_out,
                           __global const float *a, __global const float *b,
                           __global float *grad_a, __global float *grad_b,
                           const int n) {
    int chunk = (n + get_global_size(0) - 1) / get_global_size(0);
    int start = get_global_id(0) * chunk;
    int stop = start + chunk < n ? start + chunk : n;
    for (int i = start; i < stop; i++) {
        grad_a[i] = grad_out[i] * b[i];
        grad_b[i] = grad_out[i] * a[i];
    }
}

// out = c * x   (its backward is the same kernel: grad_x = c * grad_out)
__kernel void scale_forward(__global const float *x, __global float *out,
                            const float c, const int n) {
    int chunk = (n + get_global_size(0) - 1) / get_global_size(0);
    int start = get_global_id(0) * chunk;
    int stop = start + chunk < n ? start + chunk : n;
    for (int i = start; i < stop; i++) out[i] = c * x[i];
}
