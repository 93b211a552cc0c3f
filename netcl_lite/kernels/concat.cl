// Join two buffers row by row: the KV-cache appends new positions.
//   a is (R, A), b is (R, Bn) -> out is (R, A + Bn)
// The cache views k (B, HKV, S, Dh) as (B*HKV, S*Dh), so row r of out is
// head r's past keys followed by its new ones, already in (S, Dh) order.
//
// Only a forward kernel: the cache runs at inference, outside any tape,
// so no gradient ever flows through it. (Its backward would be the split:
// grad_a = grad_out[:, :A], grad_b = grad_out[:, A:].)

__kernel void concat_forward(__global const float *a, __global const float *b,
                             __global float *out,
                             const int R, const int A, const int Bn) {
    int i = get_global_id(0);
    int W = A + Bn;
    if (i >= R * W) return;
    int r = i / W;
    int c = i - r * W;
    out[i] = c < A ? a[r * A + c] : b[r * Bn + (c - A)];
}
