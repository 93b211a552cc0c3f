// y = c * x, one work-item per value (tests/core/test_kernel_file.py).
//   x, y are (n,); ids is (n,) int32 and only read.
__kernel void scale(__global const float *x, __global const int *ids,
                    __global float *y, const float c, const int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    y[i] = c * x[i] + 0.0f * ids[i];
}

// The same without the early return: the padding work-items write past y.
__kernel void scale_unguarded(__global const float *x, __global const int *ids,
                              __global float *y, const float c, const int n) {
    int i = get_global_id(0);
    y[i] = c * x[i];
}

// Reads one value past the end of x for the last i.
__kernel void scale_shifted(__global const float *x, __global const int *ids,
                            __global float *y, const float c, const int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    y[i] = c * x[i + 1];
}

// Copies x, guard values included, into y (and past its end).
__kernel void copy_past_end(__global const float *x, __global const int *ids,
                            __global float *y, const float c, const int n) {
    int i = get_global_id(0);
    if (i > n) return;
    y[i] = x[i];
}
