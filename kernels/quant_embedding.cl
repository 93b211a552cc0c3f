// Token embedding from a quantised table: row ids[t] of W (V, D),
// dequantised (quant_format.cl). No backward: quantised weights get no
// gradient.
#include "quant_format.cl"

// ---------------------------------------------------------------------------
// out (N, D) = W[ids] with ids (N,) in [0, V) (checked on the host).
// Global size (D, N).
// ---------------------------------------------------------------------------
__kernel void quant_embedding(__global const half *scales,
                              __global const uchar *quants,
                              __global const int *ids, __global float *out,
                              const int qtype, const int N, const int D) {
    int c = get_global_id(0), t = get_global_id(1);
    if (c >= D || t >= N) return;
    out[(long)t * D + c] = quant_weight(qtype, scales, quants, ids[t], c, D);
}
