// KV-cache decoding, fused: one new token per sequence through the whole
// decoder (chapter 09's DecoderLM), forward only (inference/decode.py
// launches these kernels, inference/decoder.py's FusedDecoder drives them).
//
// Why this path exists: generating is launch-bound, not compute-bound. For
// chapter 09's model (D 128, 2 layers, 4 query / 2 kv heads, d_k 32, SwiGLU
// 352, V 1024) one new token through the ordinary layers ran 38 kernels
// whose device time added up to about 0.3 ms, while Python spent about
// 1.05 ms of CPU per token to launch them (about 11 us per launch inside
// pyopencl and PoCL, the rest in autograd nodes, new Tensors and checks).
// Here every stage of a layer works on one row per sequence, and the
// stages that can share a pass over the weights do:
//
//   decode_qkv        RMSNorm + x [Wq|Wk|Wv] + RoPE at pos + k, v into the cache
//   decode_attention  the new query against every cached key (GQA, online softmax)
//   decode_residual   out = res + a W      (the attention output, the FFN's down)
//   decode_swiglu     RMSNorm + silu(x Wg) * (x Wu)
//   decode_norm_matvec  RMSNorm + x W      (the final norm and the output head)
//
// so a token is 5 launches per layer plus 1: 11 for chapter 09's model.
// Measured there (2 cores, greedy, 56 new tokens after an 8-token prompt):
// about 90 us of device time and 0.2 ms of Python CPU per token, 2800-4200
// tokens/s against 630-880 through the layers (torch's twin: about 1500).
//
// Shapes (B sequences, one new row each; N = (H + 2 HKV) d_k):
//   x, h          (B, D)      the residual stream before / inside a layer
//   rows          (B,) int    the row of the input table each sequence reads:
//                 the token ids into the embedding table for layer 0, else
//                 0, 1, ..., B - 1 (so the embedding lookup needs no kernel)
//   wqkv          (D, N)      wq, wk, wv side by side (concatenated once)
//   k, v caches   (B, HKV, T, d_k), T = max_seq_len; row pos is the new one
//   table         (T, d_k / 2, 2)  RoPE's (cos, sin), as rope.cl computes it
//
// Matrix-vector products: a work-item owns CB = 32 neighbouring output
// columns and walks down the rows of W, keeping the sums in private arrays
// the compiler holds in SIMD registers (reading contiguous floats per row).
// Why 32 and not 8: measured on PoCL (2 cores), the head's 128 x 1024
// product took 47 us with 8 columns per work-item (128 work-items, two
// work-groups: a second worker thread must wake up) and 15 us with 32 (one
// work-group); the 128 x 352 ones 5 us and 4 us. The sums are formed in
// row order, like the other kernels, but not in the same blocks as
// matmul.cl: results agree to float32 rounding, not bit for bit.
// No builtins in the loops (PoCL calls them out of line): exp is
// exp_poly.cl's, via sigmoid.cl; rsqrt is called once per work-item.
//
// The steps the layer-by-layer kernels also take come from the files they
// share, so both paths normalise, rotate and gate a value to the same bits:
// row_rstd (rms_norm.cl's forward), rope_pair (rope.cl), silu (silu.cl and
// swiglu.cl), and each key of the attention is flash_attention_simple.cl's
// (attention_row.cl: the dot product and the online softmax's step), with
// exp_poly for exp and no mask (a window only moves the loop's start): the
// same sums, and exps within 2 ulp of the training kernel's. The products
// are decode.cl's own: a row times a matrix sums in other blocks than
// matmul.cl.

#include "sigmoid.cl"     // silu, stable_sigmoid and exp_poly, builtin-free
#include "rms_row.cl"     // row_rstd: 1 / rms of a row, in 8 lanes
#include "rope_pair.cl"   // rope_pair: one pair's RoPE rotation
#define ROW_EXP exp_poly   // attention_row.cl's exp: builtin-free
#include "attention_row.cl"   // row_dot and online_step

#define CB 32           // output columns per work-item (inference/decode.py: CB)

// acc[t] = sum_i a_i W[i, c0 + t] for t < min(CB, N - c0), W (K, N), where
// a_i = x[i] * inv * g[i] (the RMS-normalised row) when g is given, else x[i].
// The rows are taken 4 at a time into 4 separate sets of sums, added at
// the end: one set alone is a chain of K dependent additions, each waiting
// for the one before (measured: the output head took 3x longer that way).
inline void matvec_block(__global const float *x, __global const float *g,
                         const float inv, __global const float *W,
                         const int K, const int N, const int c0, float *acc) {
    float s0[CB], s1[CB], s2[CB], s3[CB];
    for (int t = 0; t < CB; t++) s0[t] = s1[t] = s2[t] = s3[t] = 0.0f;
    int nc = N - c0 < CB ? N - c0 : CB;
    int k4 = K - K % 4;
    if (nc == CB) {                                  // a full block: SIMD
        for (int i = 0; i < k4; i += 4) {
            float a0 = g ? x[i] * inv * g[i] : x[i];
            float a1 = g ? x[i + 1] * inv * g[i + 1] : x[i + 1];
            float a2 = g ? x[i + 2] * inv * g[i + 2] : x[i + 2];
            float a3 = g ? x[i + 3] * inv * g[i + 3] : x[i + 3];
            __global const float *w = W + (long)i * N + c0;
            for (int t = 0; t < CB; t++) {
                s0[t] += a0 * w[t];
                s1[t] += a1 * w[N + t];
                s2[t] += a2 * w[2L * N + t];         // long: 3 N may pass 2^31
                s3[t] += a3 * w[3L * N + t];
            }
        }
        for (int i = k4; i < K; i++) {
            float a = g ? x[i] * inv * g[i] : x[i];
            __global const float *w = W + (long)i * N + c0;
            for (int t = 0; t < CB; t++) s0[t] += a * w[t];
        }
    } else {                                         // the last, narrow block
        for (int i = 0; i < K; i++) {
            float a = g ? x[i] * inv * g[i] : x[i];
            __global const float *w = W + (long)i * N + c0;
            for (int t = 0; t < nc; t++) s0[t] += a * w[t];
        }
    }
    for (int t = 0; t < CB; t++) acc[t] = (s0[t] + s1[t]) + (s2[t] + s3[t]);
}

// Stage 1 of a layer. Work-item (b, blk) computes the columns
// c0 = CB blk .. c0 + CB - 1 of norm(x_b) [Wq|Wk|Wv] (N columns, N even,
// c0 even: a RoPE pair never straddles two work-items) and sends each pair
// where it belongs: q (rotated) to q (B, H d_k), k (rotated) and v to row
// pos of their cache.
__kernel void decode_qkv(__global const float *x, __global const int *rows,
                         __global const float *norm_w,
                         __global const float *wqkv,
                         __global const float *table,
                         __global float *q, __global float *k_cache,
                         __global float *v_cache,
                         const int B, const int D, const int H, const int HKV,
                         const int dk, const int T, const int pos,
                         const float eps) {
    int N = (H + 2 * HKV) * dk;
    int nb = (N + CB - 1) / CB;                      // blocks per row
    int gid = get_global_id(0);
    if (gid >= B * nb) return;
    int b = gid / nb, c0 = (gid - b * nb) * CB;
    __global const float *xr = x + (long)rows[b] * D;       // (D,)
    float acc[CB];
    matvec_block(xr, norm_w, row_rstd(xr, D, eps), wqkv, D, N, c0, acc);
    __global const float *cs = table + (long)pos * dk;      // (d_k / 2, 2)
    int nc = N - c0 < CB ? N - c0 : CB;
    for (int t = 0; t < nc; t += 2) {
        int c = c0 + t;                  // column of the pair's first value
        int head = c / dk, d = c - head * dk;        // d even
        float x0 = acc[t], x1 = acc[t + 1];
        if (head < H + HKV) {                        // q or k: rotate by pos
            float2 r = rope_pair(x0, x1, cs[d], cs[d + 1]);  // pair d / 2
            if (head < H) {
                __global float *qr = q + ((long)b * H + head) * dk + d;
                qr[0] = r.x;
                qr[1] = r.y;
            } else {
                __global float *kr = k_cache +
                    (((long)b * HKV + head - H) * T + pos) * dk + d;
                kr[0] = r.x;
                kr[1] = r.y;
            }
        } else {                                     // v: stored as it is
            __global float *vr = v_cache +
                (((long)b * HKV + head - H - HKV) * T + pos) * dk + d;
            vr[0] = x0;
            vr[1] = x1;
        }
    }
}

// Stage 2. One work-item per query head (b, h): its new row attends to the
// cached positions 0 .. Sk - 1 (all of them are in the past, so no mask),
// through kv head h / (H / HKV). The online softmax of
// flash_attention_simple.cl (attention_row.cl's step, on exp_poly): m the
// largest score so far, l the sum of exp(s_j - m), o (kept in the output
// row) the sum of exp(s_j - m) v_j.
// window W > 0 (sliding-window attention): only the last W positions,
// Sk - W .. Sk - 1; the older ones are never read. 0: all of them.
//   q, o (B, H d_k); caches (B, HKV, T, d_k)
__kernel void decode_attention(__global const float *q,
                               __global const float *k_cache,
                               __global const float *v_cache,
                               __global float *out, const int B, const int H,
                               const int HKV, const int dk, const int T,
                               const int Sk, const float scale,
                               const int window) {
    int bh = get_global_id(0);                       // b * H + h
    if (bh >= B * H) return;
    int b = bh / H, h = bh - b * H;
    long kv = ((long)b * HKV + h / (H / HKV)) * T * dk;
    __global const float *qi = q + (long)bh * dk;    // (d_k,)
    __global const float *kh = k_cache + kv;         // (T, d_k)
    __global const float *vh = v_cache + kv;         // (T, d_k)
    __global float *o = out + (long)bh * dk;         // (d_k,)
    float m = -INFINITY, l = 0.0f;
    for (int c = 0; c < dk; c++) o[c] = 0.0f;
    int first = window > 0 && Sk > window ? Sk - window : 0;
    for (int j = first; j < Sk; j++) {
        float s = row_dot(qi, kh + (long)j * dk, dk) * scale;   // q . k_j
        online_step(s, vh + (long)j * dk, dk, &m, &l, o);
    }
    for (int c = 0; c < dk; c++) o[c] = o[c] / l;    // l >= 1: key pos is seen
}

// Stages 3 and 5: out (B, N) = res[rows] + a W, a (B, K), W (K, N):
// the attention's output projection and the FFN's down projection, each
// with its residual added. Work-item (b, blk) owns CB columns.
__kernel void decode_residual(__global const float *res,
                              __global const int *rows,
                              __global const float *a, __global const float *W,
                              __global float *out, const int B, const int K,
                              const int N) {
    int nb = (N + CB - 1) / CB;
    int gid = get_global_id(0);
    if (gid >= B * nb) return;
    int b = gid / nb, c0 = (gid - b * nb) * CB;
    float acc[CB];
    matvec_block(a + (long)b * K, 0, 1.0f, W, K, N, c0, acc);
    __global const float *rr = res + (long)rows[b] * N + c0;
    __global float *outr = out + (long)b * N + c0;
    int nc = N - c0 < CB ? N - c0 : CB;
    for (int t = 0; t < nc; t++) outr[t] = rr[t] + acc[t];
}

// Stage 4: out (B, HID) = silu(norm(h) Wg) * (norm(h) Wu), Wg and Wu (D, HID);
// the gate as swiglu.cl computes it.
__kernel void decode_swiglu(__global const float *h,
                            __global const float *norm_w,
                            __global const float *w_gate,
                            __global const float *w_up, __global float *out,
                            const int B, const int D, const int HID,
                            const float eps) {
    int nb = (HID + CB - 1) / CB;
    int gid = get_global_id(0);
    if (gid >= B * nb) return;
    int b = gid / nb, c0 = (gid - b * nb) * CB;
    __global const float *hr = h + (long)b * D;
    float inv = row_rstd(hr, D, eps);
    float gate[CB], up[CB];
    matvec_block(hr, norm_w, inv, w_gate, D, HID, c0, gate);
    matvec_block(hr, norm_w, inv, w_up, D, HID, c0, up);
    __global float *outr = out + (long)b * HID + c0;
    int nc = HID - c0 < CB ? HID - c0 : CB;
    for (int t = 0; t < nc; t++)
        outr[t] = silu(gate[t]) * up[t];
}

// The end of the model: logits (B, V) = norm(x) W, W (D, V).
__kernel void decode_norm_matvec(__global const float *x,
                                 __global const float *norm_w,
                                 __global const float *W, __global float *out,
                                 const int B, const int D, const int V,
                                 const float eps) {
    int nb = (V + CB - 1) / CB;
    int gid = get_global_id(0);
    if (gid >= B * nb) return;
    int b = gid / nb, c0 = (gid - b * nb) * CB;
    __global const float *xr = x + (long)b * D;
    float acc[CB];
    matvec_block(xr, norm_w, row_rstd(xr, D, eps), W, D, V, c0, acc);
    __global float *outr = out + (long)b * V + c0;
    int nc = V - c0 < CB ? V - c0 : CB;
    for (int t = 0; t < nc; t++) outr[t] = acc[t];
}

// Once per generate(): the keys or values the prompt's forward left in a
// KVCache, src (R, P, d_k) with R = B HKV, into the first P rows of the
// fixed-size cache dst (R, T, d_k). One work-item per row (r, p).
__kernel void decode_load_cache(__global const float *src, __global float *dst,
                                const int R, const int P, const int T,
                                const int dk) {
    int row = get_global_id(0);                      // r * P + p
    if (row >= R * P) return;
    int r = row / P, p = row - r * P;
    __global const float *s = src + (long)row * dk;
    __global float *d = dst + ((long)r * T + p) * dk;
    for (int c = 0; c < dk; c++) d[c] = s[c];
}
