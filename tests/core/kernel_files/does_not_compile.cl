// A missing semicolon on line 6 (tests/core/test_kernel_file.py).
__kernel void scale(__global const float *x, __global const int *ids,
                    __global float *y, const float c, const int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float v = c * x[i]
    y[i] = v;
}
