// Permute the axes of a tensor of up to 4 dims into a contiguous output.
// The Python side pads every shape to 4-D with leading 1s, so one kernel
// serves (S, D) -> (D, S) and (B, S, H, d_k) -> (B, H, S, d_k) alike.
//
//   out is (o0, o1, o2, o3), contiguous: rows = o0*o1*o2 rows of o3 values.
//   out[i0, i1, i2, i3] = x[i0*s0 + i1*s1 + i2*s2 + i3*s3]
// where s_k is x's stride along the input axis that becomes output axis k.
// Example: x (2, 3) -> out (3, 2) uses (o1, o2, o3) = (1, 3, 2) and
// (s0, s1, s2, s3) = (0, 0, 1, 3).
//
// Global size (n / o3,): one work-item moves one output row of o3 values
// (the index arithmetic, three divisions, is paid once per row, not once
// per value).

// Output row t = (i0, i1, i2) -> the input offset of its first value.
long permute_row_offset(int t, const int o1, const int o2, const int s0,
                        const int s1, const int s2) {
    int i2 = t % o2;
    int r = t / o2;
    int i1 = r % o1;
    int i0 = r / o1;
    return (long)i0 * s0 + (long)i1 * s1 + (long)i2 * s2;
}

// out = x with its axes permuted (a gather: each output value reads one input)
__kernel void permute_forward(__global const float *x, __global float *out,
                              const int o1, const int o2, const int o3,
                              const int s0, const int s1, const int s2,
                              const int s3, const int rows) {
    int t = get_global_id(0);
    if (t >= rows) return;
    __global const float *src = x + permute_row_offset(t, o1, o2, s0, s1, s2);
    __global float *dst = out + (long)t * o3;
    for (int i3 = 0; i3 < o3; i3++) dst[i3] = src[(long)i3 * s3];
}

// grad_x = grad_out permuted back by the inverse axes. Called with the SAME
// sizes and strides as the forward, it walks the same index map the other
// way (a scatter). A permutation is one-to-one, so every grad_x value is
// written exactly once: no atomics, deterministic. (permute_forward called
// with the inverse axes' strides computes the same thing as a gather.)
__kernel void permute_backward(__global const float *grad_out,
                               __global float *grad_x,
                               const int o1, const int o2, const int o3,
                               const int s0, const int s1, const int s2,
                               const int s3, const int rows) {
    int t = get_global_id(0);
    if (t >= rows) return;
    __global float *dst = grad_x + permute_row_offset(t, o1, o2, s0, s1, s2);
    __global const float *src = grad_out + (long)t * o3;
    for (int i3 = 0; i3 < o3; i3++) dst[(long)i3 * s3] = src[i3];
}
