// KV-cache decoding with quantised weights, fused: one new token per
// sequence through a decoder whose matrices stay in their GGUF blocks
// (chapter 14's SmolLM2; inference/decode_quant.py launches these kernels,
// inference/quantized_decoder.py's QuantizedDecoder drives them).
//
// decode.cl does the same for float32 weights stored (in, out); a GGUF
// file stores each matrix one row per output, (out, in), in blocks of 32
// weights along the row. So here a work-item owns whole output rows: it
// walks its row's blocks once, and each decoded weight meets the input
// value it multiplies at once (no transposed layout, no scratch).
//
// A layer is 5 launches, a token 5 per layer plus 4:
//   quant_embedding     (quant_embedding.cl) the token's row x of the table
//   qdecode_gain        xg = x * g (layer 0's attention-norm gain)
//   qdecode_qkv         xn [Wq|Wk|Wv]^T + RoPE at pos; k, v into the cache
//   qdecode_attention   the query against the cached keys
//   qdecode_residual    x += o Wo^T, and xg = x * g (the FFN norm's gain)
//   qdecode_swiglu      hidden = silu(xn Wg^T) * (xn Wu^T)
//   qdecode_residual    x += hidden Wd^T, xg = x * g (the next layer's)
//   qdecode_norm, qdecode_matvec: the logits
// The RMSNorms need no launch of their own: xn = (x * g) / rms(x), and
// the products are linear, so xn W^T = (xg W^T) / rms(x). The residual
// kernel that writes x writes xg = x * g beside it (one product a value),
// and each work-item of qkv and swiglu finds 1 / rms(x) itself (D numbers
// from L1, in 16 lanes: a tenth of its work). Measured on 2 shared cores,
// a launch cost 0.02-0.12 ms of wall time between kernels, depending on
// the load; a separate norm kernel was 60 of them a token. (Multiplying
// by g inside the row loop instead made the SwiGLU kernel 3x slower.)
//
// The simple rung is the layer-by-layer path: the same model through its
// modules (quant_simple.cl with F.quantized_matmul(kernel="simple")).
// tests/nn/test_quantized_decode.py checks these kernels against it and
// against a numpy forward pass, in every block format.

// Why rows: decoding is memory-bound (every weight is read once a token),
// so what matters is that decoding a block costs fewer instructions than
// reading it. qrow_dot below is quant.cl's matrix-vector loop (vload16 of
// the codes, float16 products in vector accumulators reduced once at the
// end of the row, the scales of 8 blocks in one load) with one change: the
// 4-bit formats' offset term (Q4_1: m * sum of x over the block) is summed
// in its own vector accumulator as the loop goes, instead of from block
// sums computed by another launch. The input row is in L1 for every
// work-item, so the extra add is cheap; a launch is not (tens of us).
//
// The kernels loop over the B sequences inside a work-item, so a row of W
// is read from memory once for all of them.
//
// Index convention: sizes, counts and loop indices are int; an offset into
// a buffer that multiplies two of them is long.
#include "quant_format.cl"  // the formats and their codes
#include "sigmoid.cl"       // silu, builtin-free
#include "rms_row.cl"       // row_rstd: as rms_norm.cl normalises a row
#include "rope_pair.cl"     // rope_pair: one pair's RoPE rotation

#ifdef __AVX512F__   // let the compiler use 512-bit registers for float16
#define WIDE __attribute__((min_vector_width(512)))
#else
#define WIDE
#endif

// the sum of a float16's lanes
inline float qd_hsum(float16 v) {
    float8 a = v.lo + v.hi;
    float4 b = a.lo + a.hi;
    float2 c = b.lo + b.hi;
    return c.x + c.y;
}

// One block of a 4-bit format: codes at qb (block j), x at xb (block j):
// acc += d * (lo . x[0..16) + hi . x[16..32)), off += x's 32 values in 16
// lanes (times the block's offset factor o).
#define QD_Q4(acc, off, d, o, qb, j, xb)                                    \
    do {                                                                    \
        int16 v_ = convert_int16(vload16(j, qb));                           \
        float16 x0_ = vload16(2 * (j), xb), x1_ = vload16(2 * (j) + 1, xb);  \
        acc = (d) * (convert_float16(v_ & 15) * x0_ +                       \
                     convert_float16(v_ >> 4) * x1_) + acc;                 \
        off = (o) * (x0_ + x1_) + off;                                      \
    } while (0)

// One Q8_0 block: 32 signed code bytes.
#define QD_Q8(acc, d, qb, j, xb)                                            \
    acc = (d) * (convert_float16(vload16(2 * (j), qb)) * vload16(2 * (j), xb) \
          + convert_float16(vload16(2 * (j) + 1, qb)) *                     \
            vload16(2 * (j) + 1, xb)) + acc

// Row r of W (rows, 32 nb), any format, times x (32 nb,): sum_c W[r, c] x[c].
inline float qrow_dot(const int code, __global const half *scales,
                      __global const uchar *quants, const int r, const int nb,
                      __global const float *x) {
    float16 acc = (float16)(0.0f), acc2 = (float16)(0.0f);
    float16 off = (float16)(0.0f);           // the 4-bit formats' offsets
    int b = 0;
    if (code == QUANT_Q4_1) {
        __global const half *dm = scales + (long)r * nb * 2;   // (nb, 2)
        __global const uchar *q = quants + (long)r * nb * 16;  // (nb, 16)
        for (; b + 8 <= nb; b += 8) {    // 8 blocks: one load of the scales
            float16 s = vload_half16(0, dm + 2 * b);   // d0 m0 .. d7 m7
            __global const uchar *qb = q + b * 16;
            __global const float *xb = x + b * 32;
            QD_Q4(acc, off, s.s0, s.s1, qb, 0, xb);   // two accumulators:
            QD_Q4(acc2, off, s.s2, s.s3, qb, 1, xb);  // two chains of adds
            QD_Q4(acc, off, s.s4, s.s5, qb, 2, xb);
            QD_Q4(acc2, off, s.s6, s.s7, qb, 3, xb);
            QD_Q4(acc, off, s.s8, s.s9, qb, 4, xb);
            QD_Q4(acc2, off, s.sa, s.sb, qb, 5, xb);
            QD_Q4(acc, off, s.sc, s.sd, qb, 6, xb);
            QD_Q4(acc2, off, s.se, s.sf, qb, 7, xb);
        }
        for (; b < nb; b++) {            // the last nb % 8 blocks
            float2 s = vload_half2(b, dm);
            QD_Q4(acc, off, s.x, s.y, q, b, x);
        }
        return qd_hsum(acc + acc2) + qd_hsum(off);
    }
    if (code == QUANT_Q4_0) {            // d (q - 8): offset -8 d sum(x)
        __global const half *ds = scales + (long)r * nb;        // (nb,)
        __global const uchar *q = quants + (long)r * nb * 16;   // (nb, 16)
        for (; b + 8 <= nb; b += 8) {
            float8 d = vload_half8(0, ds + b);
            __global const uchar *qb = q + b * 16;
            __global const float *xb = x + b * 32;
            QD_Q4(acc, off, d.s0, d.s0, qb, 0, xb);
            QD_Q4(acc2, off, d.s1, d.s1, qb, 1, xb);
            QD_Q4(acc, off, d.s2, d.s2, qb, 2, xb);
            QD_Q4(acc2, off, d.s3, d.s3, qb, 3, xb);
            QD_Q4(acc, off, d.s4, d.s4, qb, 4, xb);
            QD_Q4(acc2, off, d.s5, d.s5, qb, 5, xb);
            QD_Q4(acc, off, d.s6, d.s6, qb, 6, xb);
            QD_Q4(acc2, off, d.s7, d.s7, qb, 7, xb);
        }
        for (; b < nb; b++) {
            float d = vload_half(b, ds);
            QD_Q4(acc, off, d, d, q, b, x);
        }
        return qd_hsum(acc + acc2) - 8.0f * qd_hsum(off);
    }
    if (code == QUANT_Q8_0) {
        __global const half *ds = scales + (long)r * nb;        // (nb,)
        __global const char *q = (__global const char *)quants +
                                 (long)r * nb * 32;             // (nb, 32)
        for (; b + 8 <= nb; b += 8) {
            float8 d = vload_half8(0, ds + b);
            __global const char *qb = q + b * 32;
            __global const float *xb = x + b * 32;
            QD_Q8(acc, d.s0, qb, 0, xb);
            QD_Q8(acc2, d.s1, qb, 1, xb);
            QD_Q8(acc, d.s2, qb, 2, xb);
            QD_Q8(acc2, d.s3, qb, 3, xb);
            QD_Q8(acc, d.s4, qb, 4, xb);
            QD_Q8(acc2, d.s5, qb, 5, xb);
            QD_Q8(acc, d.s6, qb, 6, xb);
            QD_Q8(acc2, d.s7, qb, 7, xb);
        }
        for (; b < nb; b++)
            QD_Q8(acc, vload_half(b, ds), q, b, x);
        return qd_hsum(acc + acc2);
    }
    // F16: the row's halves, 32 at a time
    __global const half *w = (__global const half *)quants + (long)r * nb * 32;
    for (; b < nb; b++) {
        acc = vload_half16(2 * b, w) * vload16(2 * b, x) + acc;
        acc2 = vload_half16(2 * b + 1, w) * vload16(2 * b + 1, x) + acc2;
    }
    return qd_hsum(acc + acc2);
}

// 1 / rms of a row x (D,), D % 16 == 0, in 16 lanes (cheap enough for
// every work-item of qkv and swiglu to find it for itself).
inline float qd_rstd(__global const float *x, const int D, const float eps) {
    float16 acc = (float16)(0.0f);
    for (int i = 0; i < D; i += 16) {
        float16 v = vload16(0, x + i);
        acc = v * v + acc;
    }
    return rsqrt(qd_hsum(acc) / D + eps);
}

// xg (B, D) = x * g, g (D,): layer 0's input times its norm's gain.
// Global size (B * D,).
__kernel void qdecode_gain(__global const float *x, __global const float *g,
                           __global float *xg, const int B, const int D) {
    int i = get_global_id(0);
    if (i >= B * D) return;
    xg[i] = x[i] * g[i % D];
}

// xn (B, D) = RMSNorm(x) * g, row by row, as rms_norm.cl's forward
// computes it (row_rstd, then x * rstd * g). Global size (B * D / 32,):
// a work-item writes one block of 32 values (each finds the row's rstd
// itself: D numbers from L1, cheaper than a second launch).
__kernel void qdecode_norm(__global const float *x, __global const float *g,
                           __global float *xn, const int B, const int D,
                           const float eps) {
    int nb = D / 32;
    int i = get_global_id(0);
    if (i >= B * nb) return;
    int b = i / nb, c0 = (i - b * nb) * 32;
    __global const float *xr = x + (long)b * D;
    float inv = row_rstd(xr, D, eps);
    for (int c = c0; c < c0 + 32; c++)
        xn[(long)b * D + c] = xr[c] * inv * g[c];
}

// Stage 1 of a layer: the rows of [Wq; Wk; Wv] (each (., D), one format
// each) times xn = xg / rms(x) (xg = x * g, the norm's gain). A work-item
// owns QKV_PAIRS RoPE pairs (two rows each; QKV_PAIRS pairs per work-item
// for the reason of SWIGLU_ROWS below): q (rotated) to q (B, H d_k),
// k (rotated) and v to row pos of their cache (B, HKV, T, d_k).
// Global size (ceil((H + 2 HKV) d_k / 2 / QKV_PAIRS),).
#define QKV_PAIRS 2   // inference/decode_quant.py: QKV_PAIRS
WIDE __kernel void qdecode_qkv(__global const float *x,
                               __global const float *xg, const float eps,
                               __global const half *q_scales,
                               __global const uchar *q_quants, const int q_code,
                               __global const half *k_scales,
                               __global const uchar *k_quants, const int k_code,
                               __global const half *v_scales,
                               __global const uchar *v_quants, const int v_code,
                               __global const float *table,
                               __global float *q, __global float *k_cache,
                               __global float *v_cache, const int B,
                               const int D, const int H, const int HKV,
                               const int dk, const int T, const int pos) {
    int pairs = (H + 2 * HKV) * dk / 2;
    int p0 = get_global_id(0) * QKV_PAIRS;
    if (p0 >= pairs) return;
    int p1 = p0 + QKV_PAIRS < pairs ? p0 + QKV_PAIRS : pairs;
    int nb = D / 32;
    __global const float *cs = table + (long)pos * dk;   // (d_k / 2, 2)
    for (int b = 0; b < B; b++) {
        __global const float *xb = xg + (long)b * D;
        float inv = qd_rstd(x + (long)b * D, D, eps);    // the norm's 1 / rms
        for (int p = p0; p < p1; p++) {
            int c = 2 * p;                   // the pair's first row of [Wq; Wk; Wv]
            int head = c / dk, d = c - head * dk;        // d even
            if (head < H) {                              // a query pair: rotate
                float x0 = inv * qrow_dot(q_code, q_scales, q_quants, c, nb, xb);
                float x1 = inv * qrow_dot(q_code, q_scales, q_quants, c + 1, nb,
                                          xb);
                float2 r = rope_pair(x0, x1, cs[d], cs[d + 1]);
                __global float *qr = q + ((long)b * H + head) * dk + d;
                qr[0] = r.x;
                qr[1] = r.y;
            } else if (head < H + HKV) {                 // a key pair: rotate
                int row = c - H * dk;
                float x0 = inv * qrow_dot(k_code, k_scales, k_quants, row, nb,
                                          xb);
                float x1 = inv * qrow_dot(k_code, k_scales, k_quants, row + 1,
                                          nb, xb);
                float2 r = rope_pair(x0, x1, cs[d], cs[d + 1]);
                __global float *kr = k_cache +
                    (((long)b * HKV + head - H) * T + pos) * dk + d;
                kr[0] = r.x;
                kr[1] = r.y;
            } else {                                     // a value pair, as is
                int row = c - (H + HKV) * dk;
                __global float *vr = v_cache +
                    (((long)b * HKV + head - H - HKV) * T + pos) * dk + d;
                vr[0] = inv * qrow_dot(v_code, v_scales, v_quants, row, nb, xb);
                vr[1] = inv * qrow_dot(v_code, v_scales, v_quants, row + 1, nb,
                                       xb);
            }
        }
    }
}

// out (B, N) (+)= a (B, K) W^T, W (N, K) quantised: the output head
// (accumulate = 0; 1 adds to out). Global size (N,).
WIDE __kernel void qdecode_matvec(__global const float *a,
                                  __global const half *scales,
                                  __global const uchar *quants, const int code,
                                  __global float *out, const int B,
                                  const int K, const int N,
                                  const int accumulate) {
    int r = get_global_id(0);
    if (r >= N) return;
    for (int b = 0; b < B; b++) {
        float y = qrow_dot(code, scales, quants, r, K / 32, a + (long)b * K);
        __global float *o = out + (long)b * N + r;
        *o = accumulate ? *o + y : y;
    }
}

// Stages 3 and 5: x (B, N) += a (B, K) W^T, W (N, K) quantised (the
// attention's output projection, the FFN's down projection, each with its
// residual), and xg = x * g, g (N,) the gain of the norm that reads x next.
// Global size (N,).
WIDE __kernel void qdecode_residual(__global const float *a,
                                    __global const half *scales,
                                    __global const uchar *quants,
                                    const int code, __global float *x,
                                    __global const float *g,
                                    __global float *xg, const int B,
                                    const int K, const int N) {
    int r = get_global_id(0);
    if (r >= N) return;
    for (int b = 0; b < B; b++) {
        float y = x[(long)b * N + r] +
                  qrow_dot(code, scales, quants, r, K / 32, a + (long)b * K);
        x[(long)b * N + r] = y;
        xg[(long)b * N + r] = y * g[r];
    }
}

// Stage 4: hidden (B, F) = silu(xn Wg^T) * (xn Wu^T), Wg and Wu (F, D),
// xn = xg / rms(x) as in qdecode_qkv; the gate as swiglu.cl computes it.
// A work-item owns SWIGLU_ROWS hidden units, so that finding 1 / rms(x)
// costs it little next to its 2 SWIGLU_ROWS row products (one unit per
// work-item: 30% more time than with a norm kernel of its own).
// Global size (ceil(F / SWIGLU_ROWS),).
#define SWIGLU_ROWS 4   // inference/decode_quant.py: SWIGLU_ROWS
WIDE __kernel void qdecode_swiglu(__global const float *x,
                                  __global const float *xg, const float eps,
                                  __global const half *g_scales,
                                  __global const uchar *g_quants,
                                  const int g_code,
                                  __global const half *u_scales,
                                  __global const uchar *u_quants,
                                  const int u_code, __global float *hidden,
                                  const int B, const int D, const int F) {
    int r0 = get_global_id(0) * SWIGLU_ROWS;
    if (r0 >= F) return;
    int r1 = r0 + SWIGLU_ROWS < F ? r0 + SWIGLU_ROWS : F;
    int nb = D / 32;
    for (int b = 0; b < B; b++) {
        __global const float *xb = xg + (long)b * D;
        float inv = qd_rstd(x + (long)b * D, D, eps);    // the norm's 1 / rms
        for (int r = r0; r < r1; r++) {
            float gate = inv * qrow_dot(g_code, g_scales, g_quants, r, nb, xb);
            float up = inv * qrow_dot(u_code, u_scales, u_quants, r, nb, xb);
            hidden[(long)b * F + r] = silu(gate) * up;
        }
    }
}

// Stage 2: the new query row of head (b, h) against the cached positions
// first .. Sk - 1 (all in the past: no mask), through kv head h / (H / HKV).
// decode.cl's decode_attention takes one key at a time with an online
// softmax, a scalar loop whose cost grows with the text (about 0.4 ms a
// layer at 640 cached positions). Here each work-item makes three passes,
// each a plain vector loop: the scores q . k_j into scratch (float16
// products, reduced once a key), their exps and sum, then o = sum_j p_j v_j
// in one float16 accumulator per 16 columns. d_k % 16 == 0 (the Python
// side takes decode_attention otherwise). window W > 0: the last W keys.
//   q, o (B, H d_k); caches (B, HKV, T, d_k); scores (B H, T), scratch
// Global size (B * H,).
WIDE __kernel void qdecode_attention(__global const float *q,
                                     __global const float *k_cache,
                                     __global const float *v_cache,
                                     __global float *scores,
                                     __global float *out, const int B,
                                     const int H, const int HKV, const int dk,
                                     const int T, const int Sk,
                                     const float scale, const int window) {
    int bh = get_global_id(0);                       // b * H + h
    if (bh >= B * H) return;
    int b = bh / H, h = bh - b * H;
    long kv = ((long)b * HKV + h / (H / HKV)) * T * dk;
    __global const float *qi = q + (long)bh * dk;    // (d_k,)
    __global const float *kh = k_cache + kv;         // (T, d_k)
    __global const float *vh = v_cache + kv;         // (T, d_k)
    __global float *s = scores + (long)bh * T;       // (T,)
    __global float *o = out + (long)bh * dk;         // (d_k,)
    int n16 = dk / 16;
    int first = window > 0 && Sk > window ? Sk - window : 0;
    float mx = -INFINITY;
    for (int j = first; j < Sk; j++) {               // scores, and their max
        __global const float *kj = kh + (long)j * dk;
        float16 acc = (float16)(0.0f);
        for (int c = 0; c < n16; c++)
            acc = vload16(c, qi) * vload16(c, kj) + acc;
        float sj = qd_hsum(acc) * scale;
        s[j] = sj;
        mx = sj > mx ? sj : mx;
    }
    float l = 0.0f;
    for (int j = first; j < Sk; j++) {               // p_j = exp(s_j - max)
        float p = exp_poly(s[j] - mx);
        s[j] = p;
        l += p;
    }
    float inv = 1.0f / l;                            // l >= 1: the max's term
    for (int c = 0; c < n16; c++) {                  // o = sum_j p_j v_j / l
        float16 acc = (float16)(0.0f), acc2 = (float16)(0.0f);
        int j = first;
        for (; j + 1 < Sk; j += 2) {                 // two chains of adds
            acc = s[j] * vload16(c, vh + (long)j * dk) + acc;
            acc2 = s[j + 1] * vload16(c, vh + (long)(j + 1) * dk) + acc2;
        }
        if (j < Sk)
            acc = s[j] * vload16(c, vh + (long)j * dk) + acc;
        vstore16((acc + acc2) * inv, c, o);
    }
}
