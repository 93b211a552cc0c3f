// Join two buffers row by row: the KV-cache appends new positions.
//   a is (R, A), b is (R, Bn) -> out is (R, A + Bn)
// The cache views k (B, HKV, S, Dh) as (B*HKV, S*Dh), so row r of out is
// head r's past keys followed by its new ones, already in (S, Dh) order.
// A 2-D launch, (column, row): no division per value, and PoCL vectorizes
// along the columns (the innermost dimension).
//
// Only a forward kernel: the cache runs at inference, outside any tape,
// so no gradient ever flows through it. (Its backward would be the split:
// grad_a = grad_out[:, :A], grad_b = grad_out[:, A:].)

__kernel void concat_forward(__global const float *a, __global const float *b,
                             __global float *out,
                             const int R, const int A, const int Bn) {
    int c = get_global_id(0);   // column of out
    int r = get_global_id(1);   // row
    int W = A + Bn;
    if (c >= W || r >= R) return;
    out[r * W + c] = c < A ? a[r * A + c] : b[r * Bn + (c - A)];
}
