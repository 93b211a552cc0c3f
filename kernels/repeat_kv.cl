// Grouped-query attention (GQA) shares each kv head among n_rep query heads.
//   x   is (B, HKV, inner)          inner = S * d_k
//   out is (B, H, inner)            H = HKV * n_rep
// Output head h reads kv head h / n_rep, so the copies of one kv head sit
// next to each other: (b, kv * n_rep + r) for r = 0 .. n_rep - 1.
// One work-item per value. The value index i and the row offsets are long:
// B * H * inner may pass 2^31 - 1 though each size is an int (register_tile.cl's
// rule: an offset that multiplies two sizes is long). A row t and a column j
// fit an int.

__kernel void repeat_kv_forward(__global const float *x, __global float *out,
                                const int B, const int HKV, const int n_rep,
                                const int inner) {
    long i = get_global_id(0);
    int H = HKV * n_rep;
    if (i >= (long)B * H * inner) return;
    int t = (int)(i / inner);          // t = b * H + h
    int j = (int)(i - (long)t * inner);
    int b = t / H;
    int h = t - b * H;
    out[i] = x[((long)b * HKV + h / n_rep) * inner + j];
}

// grad_x (B, HKV, inner) sums the n_rep copies, in order (deterministic).
// Since b * H + kv * n_rep + r = (b * HKV + kv) * n_rep + r, copy r of the
// kv row t = b * HKV + kv is out row t * n_rep + r.
__kernel void repeat_kv_backward(__global const float *grad_out,
                                 __global float *grad_x, const int B,
                                 const int HKV, const int n_rep,
                                 const int inner) {
    long i = get_global_id(0);
    if (i >= (long)B * HKV * inner) return;
    int t = (int)(i / inner);          // t = b * HKV + kv
    int j = (int)(i - (long)t * inner);
    float acc = 0.0f;
    for (int r = 0; r < n_rep; r++)
        acc += grad_out[((long)t * n_rep + r) * inner + j];
    grad_x[i] = acc;
}
