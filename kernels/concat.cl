// Join two buffers row by row, and split a gradient back.
//   a is (R, A), b is (R, Bn) -> out is (R, A + Bn)
// Concatenating along an axis is this with R = the product of the sizes
// before the axis: the KV-cache views k (B, HKV, S, d_k) as (B*HKV, S*d_k),
// so row r of out is head r's past keys followed by its new ones, already
// in (S, d_k) order. A 2-D launch, (column, row): no division per value,
// and PoCL vectorizes along the columns (the innermost dimension).
// Row offsets are long: r * W can pass 2^31 - 1 in a large tensor (the rule
// of register_tile.cl: a product of two sizes used as an offset is long).

__kernel void concat_forward(__global const float *a, __global const float *b,
                             __global float *out,
                             const int R, const int A, const int Bn) {
    int c = get_global_id(0);   // column of out
    int r = get_global_id(1);   // row
    int W = A + Bn;
    if (c >= W || r >= R) return;
    out[(long)r * W + c] = c < A ? a[(long)r * A + c]
                                 : b[(long)r * Bn + (c - A)];
}

// The split: grad_a = grad_out[:, :A], grad_b = grad_out[:, A:].
__kernel void concat_backward(__global const float *grad_out,
                              __global float *grad_a, __global float *grad_b,
                              const int R, const int A, const int Bn) {
    int c = get_global_id(0);   // column of grad_out
    int r = get_global_id(1);   // row
    int W = A + Bn;
    if (c >= W || r >= R) return;
    float g = grad_out[(long)r * W + c];
    if (c < A) grad_a[(long)r * A + c] = g;
    else grad_b[(long)r * Bn + (c - A)] = g;
}
