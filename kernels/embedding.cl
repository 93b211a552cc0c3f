// Token embedding: a gather of table rows.
//   table is (V, D), ids is (N,) int32 (checked on the host to lie in [0, V)),
//   out is (N, D): out[n] = table[ids[n]].

// One work-item copies one row (one division per row, not per value).
__kernel void embedding_forward(__global const float *table,
                                __global const int *ids, __global float *out,
                                const int N, const int D) {
    int n = get_global_id(0);
    if (n >= N) return;
    __global const float *src = table + (long)ids[n] * D;
    __global float *dst = out + (long)n * D;
    for (int d = 0; d < D; d++) dst[d] = src[d];
}

// grad_table (V, D), zeroed by the host, gets grad_out[n] added at row ids[n].
// No float atomics: work-item d owns column d and walks the tokens in order,
// so a repeated id accumulates, and the same inputs give the same bits.
__kernel void embedding_backward(__global const float *grad_out,
                                 __global const int *ids,
                                 __global float *grad_table,
                                 const int N, const int D) {
    int d = get_global_id(0);
    if (d >= D) return;
    for (int n = 0; n < N; n++)   // long offsets: V * D or N * D may pass 2^31 - 1
        grad_table[(long)ids[n] * D + d] += grad_out[(long)n * D + d];
}
