// The fast rung of the quantised kernels (the simple rung, one value per
// work-item, is quant_simple.cl; the layout is in quant_format.cl).
//
// Decoding one token multiplies every weight matrix by one vector: each
// weight is read once and used once, so the time is the time to read the
// blocks (memory-bound, chapter 13's roofline), provided decoding a block
// costs fewer instructions than reading it. The matrix-vector kernels
// below therefore:
//   - give each work-item one row of W, walked block by block;
//   - load a block's 16 or 32 code bytes as one vector (vload16), widen
//     them to float16 vectors and multiply them with x's 32 numbers, adding
//     into float16 accumulators reduced once, at the end of the row;
//   - read the float16 scales of 8 blocks with one vload_half16 / _half8
//     (a single conversion instruction on a CPU with F16C, 8 blocks at a
//     time; one block at a time the conversion cost as much as the rest);
//   - take the 4-bit formats' offset out of the loop: a Q4_1 block adds
//     d * sum_j q_j x_j + m * sum_j x_j, and the sums of x over each block,
//     the same for every row, are computed once per input vector
//     (quant_block_sums). Q4_0's offset, -8 d, is the same trick. (Forming
//     each weight d q + m in registers instead took 19.1 ms against 17.1
//     over SmolLM2's 210 Q4_1 matrices, the sums' own launches included.)
// Compiled by Debian's PoCL 3.1 for AVX-512 (read from its object code):
// 82 instructions per step of 8 Q4_1 blocks, about 10 a block, against 27
// a block when each block's two scales were converted on their own.
//
// Prefill (many rows of x) is compute-bound instead: there W is
// dequantised in chunks of rows into float32 (quant_dequantize_blocks)
// and multiplied by the tuned matmul (functional/quantized.py).
//
// Index convention: sizes, counts and loop indices are int; an offset into
// a buffer that multiplies two of them is long.
#include "quant_format.cl"

#ifdef __AVX512F__   // let the compiler use 512-bit registers for float16
#define WIDE __attribute__((min_vector_width(512)))
#else
#define WIDE
#endif

// the sum of a float16's lanes
inline float quant_hsum(float16 v) {
    float8 a = v.lo + v.hi;
    float4 b = a.lo + a.hi;
    float2 c = b.lo + b.hi;
    return c.x + c.y;
}

// ---------------------------------------------------------------------------
// sums (M, nb) = x (M, cols) summed over each block of 32 columns.
// Global size (M * nb,).
// ---------------------------------------------------------------------------
__kernel void quant_block_sums(__global const float *x, __global float *sums,
                               const int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    sums[i] = quant_hsum(vload16(2 * i, x) + vload16(2 * i + 1, x));
}

// One block of a 4-bit format: the 16 code bytes at qb (block j from qb),
// the low nibbles times x[0..16), the high ones times x[16..32), scaled
// by d and added to acc.
#define Q4_BLOCK(acc, d, qb, j, xb)                                         \
    do {                                                                    \
        int16 v_ = convert_int16(vload16(j, qb));                           \
        float16 lo_ = convert_float16(v_ & 15);                             \
        float16 hi_ = convert_float16(v_ >> 4);                             \
        acc = (d) * (lo_ * vload16(2 * (j), xb) +                           \
                     hi_ * vload16(2 * (j) + 1, xb)) + acc;                 \
    } while (0)

// One Q8_0 block: 32 signed code bytes.
#define Q8_BLOCK(acc, d, qb, j, xb)                                         \
    acc = (d) * (convert_float16(vload16(2 * (j), qb)) * vload16(2 * (j), xb) \
          + convert_float16(vload16(2 * (j) + 1, qb)) *                     \
            vload16(2 * (j) + 1, xb)) + acc

// ---------------------------------------------------------------------------
// y (M, rows) = x (M, cols) @ W^T for a few rows of x (decoding), W in
// Q4_1; sums (M, nb) from quant_block_sums.
//     y[m, r] = sum_b d_rb * sum_j q_rbj x_mbj  +  sum_b m_rb * sums[m, b]
// One work-item per row r of W, the M rows of x in turn (the row's blocks,
// 20 bytes each, stay in L1 after the first). Global size (rows,).
// ---------------------------------------------------------------------------
WIDE __kernel void quant_matvec_q4_1(__global const float *x,
                                     __global const float *sums,
                                     __global const half *scales,
                                     __global const uchar *quants,
                                     __global float *y, const int M,
                                     const int rows, const int cols) {
    int r = get_global_id(0);
    if (r >= rows) return;
    int nb = cols / 32;
    __global const half *dm = scales + (long)r * nb * 2;   // (nb, 2): d, m
    __global const uchar *q = quants + (long)r * nb * 16;  // (nb, 16)
    for (int m = 0; m < M; m++) {
        __global const float *xm = x + (long)m * cols;
        __global const float *sm = sums + (long)m * nb;
        float16 acc = (float16)(0.0f), acc2 = (float16)(0.0f);
        float8 offsets = (float8)(0.0f);     // the m * sum(x) terms
        int b = 0;
        for (; b + 8 <= nb; b += 8) {        // 8 blocks: one scale load
            float16 s = vload_half16(0, dm + 2 * b);   // d0 m0 d1 m1 .. d7 m7
            offsets = s.odd * vload8(0, sm + b) + offsets;
            __global const uchar *qb = q + b * 16;
            __global const float *xb = xm + b * 32;
            Q4_BLOCK(acc, s.s0, qb, 0, xb);  // two accumulators: two
            Q4_BLOCK(acc2, s.s2, qb, 1, xb); // chains of adds in flight
            Q4_BLOCK(acc, s.s4, qb, 2, xb);
            Q4_BLOCK(acc2, s.s6, qb, 3, xb);
            Q4_BLOCK(acc, s.s8, qb, 4, xb);
            Q4_BLOCK(acc2, s.sa, qb, 5, xb);
            Q4_BLOCK(acc, s.sc, qb, 6, xb);
            Q4_BLOCK(acc2, s.se, qb, 7, xb);
        }
        float tail = 0.0f;
        for (; b < nb; b++) {                // the last nb % 8 blocks
            float2 s = vload_half2(b, dm);
            Q4_BLOCK(acc, s.x, q, b, xm);
            tail += s.y * sm[b];
        }
        float4 o = offsets.lo + offsets.hi;
        y[(long)m * rows + r] = quant_hsum(acc + acc2) + tail + o.x + o.y +
                                o.z + o.w;
    }
}

// ---------------------------------------------------------------------------
// The same for Q4_0, whose weight is d * (q - 8): its offset per block is
// -8 d * sums[m, b]. Global size (rows,).
// ---------------------------------------------------------------------------
WIDE __kernel void quant_matvec_q4_0(__global const float *x,
                                     __global const float *sums,
                                     __global const half *scales,
                                     __global const uchar *quants,
                                     __global float *y, const int M,
                                     const int rows, const int cols) {
    int r = get_global_id(0);
    if (r >= rows) return;
    int nb = cols / 32;
    __global const half *ds = scales + (long)r * nb;       // (nb,)
    __global const uchar *q = quants + (long)r * nb * 16;  // (nb, 16)
    for (int m = 0; m < M; m++) {
        __global const float *xm = x + (long)m * cols;
        __global const float *sm = sums + (long)m * nb;
        float16 acc = (float16)(0.0f), acc2 = (float16)(0.0f);
        float8 offsets = (float8)(0.0f);     // the d * sum(x) terms
        int b = 0;
        for (; b + 8 <= nb; b += 8) {
            float8 d = vload_half8(0, ds + b);
            offsets = d * vload8(0, sm + b) + offsets;
            __global const uchar *qb = q + b * 16;
            __global const float *xb = xm + b * 32;
            Q4_BLOCK(acc, d.s0, qb, 0, xb);
            Q4_BLOCK(acc2, d.s1, qb, 1, xb);
            Q4_BLOCK(acc, d.s2, qb, 2, xb);
            Q4_BLOCK(acc2, d.s3, qb, 3, xb);
            Q4_BLOCK(acc, d.s4, qb, 4, xb);
            Q4_BLOCK(acc2, d.s5, qb, 5, xb);
            Q4_BLOCK(acc, d.s6, qb, 6, xb);
            Q4_BLOCK(acc2, d.s7, qb, 7, xb);
        }
        float tail = 0.0f;
        for (; b < nb; b++) {
            float d = vload_half(b, ds);
            Q4_BLOCK(acc, d, q, b, xm);
            tail += d * sm[b];
        }
        float4 o = offsets.lo + offsets.hi;
        y[(long)m * rows + r] = quant_hsum(acc + acc2) -
                                8.0f * (tail + o.x + o.y + o.z + o.w);
    }
}

// ---------------------------------------------------------------------------
// The same for Q8_0 (weight d * q, q a signed byte; no offset).
// Global size (rows,).
// ---------------------------------------------------------------------------
WIDE __kernel void quant_matvec_q8_0(__global const float *x,
                                     __global const half *scales,
                                     __global const uchar *quants,
                                     __global float *y, const int M,
                                     const int rows, const int cols) {
    int r = get_global_id(0);
    if (r >= rows) return;
    int nb = cols / 32;
    __global const half *ds = scales + (long)r * nb;                 // (nb,)
    __global const char *q = (__global const char *)quants + (long)r * nb * 32;
    for (int m = 0; m < M; m++) {
        __global const float *xm = x + (long)m * cols;
        float16 acc = (float16)(0.0f), acc2 = (float16)(0.0f);
        int b = 0;
        for (; b + 8 <= nb; b += 8) {
            float8 d = vload_half8(0, ds + b);
            __global const char *qb = q + b * 32;
            __global const float *xb = xm + b * 32;
            Q8_BLOCK(acc, d.s0, qb, 0, xb);
            Q8_BLOCK(acc2, d.s1, qb, 1, xb);
            Q8_BLOCK(acc, d.s2, qb, 2, xb);
            Q8_BLOCK(acc2, d.s3, qb, 3, xb);
            Q8_BLOCK(acc, d.s4, qb, 4, xb);
            Q8_BLOCK(acc2, d.s5, qb, 5, xb);
            Q8_BLOCK(acc, d.s6, qb, 6, xb);
            Q8_BLOCK(acc2, d.s7, qb, 7, xb);
        }
        for (; b < nb; b++)
            Q8_BLOCK(acc, vload_half(b, ds), q, b, xm);
        y[(long)m * rows + r] = quant_hsum(acc + acc2);
    }
}

// ---------------------------------------------------------------------------
// The same for F16 weights (rows, cols), read as halves.
// Global size (rows,).
// ---------------------------------------------------------------------------
WIDE __kernel void quant_matvec_f16(__global const float *x,
                                    __global const half *scales,
                                    __global const uchar *quants,
                                    __global float *y, const int M,
                                    const int rows, const int cols) {
    int r = get_global_id(0);
    if (r >= rows) return;
    int n16 = cols / 16;                               // float16s in a row
    __global const half *w = (__global const half *)quants + (long)r * cols;
    for (int m = 0; m < M; m++) {
        __global const float *xm = x + (long)m * cols;
        float16 acc = (float16)(0.0f), acc2 = (float16)(0.0f);
        for (int i = 0; i < n16; i += 2) {   // cols % 32 == 0: pairs
            acc = vload_half16(i, w) * vload16(i, xm) + acc;
            acc2 = vload_half16(i + 1, w) * vload16(i + 1, xm) + acc2;
        }
        y[(long)m * rows + r] = quant_hsum(acc + acc2);
    }
}

// Block `blk` (row-major over (rows, nb)) as 32 floats: lo = weights
// 0..15, hi = weights 16..31; the values of quant_weight, bit for bit.
inline void quant_block(const int qtype, __global const half *scales,
                        __global const uchar *quants, const long blk,
                        float16 *lo, float16 *hi) {
#pragma OPENCL FP_CONTRACT OFF
    if (qtype == QUANT_F16) {
        *lo = vload_half16(2 * blk, (__global const half *)quants);
        *hi = vload_half16(2 * blk + 1, (__global const half *)quants);
    } else if (qtype == QUANT_Q8_0) {
        __global const char *q = (__global const char *)quants;
        float d = vload_half(blk, scales);
        *lo = d * convert_float16(vload16(2 * blk, q));
        *hi = d * convert_float16(vload16(2 * blk + 1, q));
    } else {
        int16 v = convert_int16(vload16(blk, quants));
        if (qtype == QUANT_Q4_0) {
            float d = vload_half(blk, scales);
            *lo = d * convert_float16((v & 15) - 8);
            *hi = d * convert_float16((v >> 4) - 8);
        } else {                             // Q4_1
            float2 s = vload_half2(blk, scales);
            float16 dlo = s.x * convert_float16(v & 15);
            float16 dhi = s.x * convert_float16(v >> 4);
            *lo = dlo + s.y;
            *hi = dhi + s.y;
        }
    }
}

// ---------------------------------------------------------------------------
// out (n, cols) = rows r0 .. r0 + n of W, as float32 (prefill's chunks).
// One work-item per block. Global size (nb, n).
// ---------------------------------------------------------------------------
__kernel void quant_dequantize_blocks(__global const half *scales,
                                      __global const uchar *quants,
                                      __global float *out, const int qtype,
                                      const int r0, const int n,
                                      const int cols) {
    int b = get_global_id(0), i = get_global_id(1);
    int nb = cols / 32;
    if (b >= nb || i >= n) return;
    float16 lo, hi;
    quant_block(qtype, scales, quants, (long)(r0 + i) * nb + b, &lo, &hi);
    __global float *o = out + (long)i * cols + b * 32;
    vstore16(lo, 0, o);
    vstore16(hi, 1, o);
}

// ---------------------------------------------------------------------------
// Backward for a few rows: dx (M, cols) = dy (M, rows) @ W.
//     dx[m, 32 b + j] = sum_r dy[m, r] * W[r, 32 b + j]
// One work-item per block column b of one row m of dx, walking W's rows.
// Global size (M * nb,).
// ---------------------------------------------------------------------------
WIDE __kernel void quant_matvec_t(__global const float *dy,
                                  __global const half *scales,
                                  __global const uchar *quants,
                                  __global float *dx, const int qtype,
                                  const int M, const int rows,
                                  const int cols) {
    int nb = cols / 32;
    int i = get_global_id(0);
    if (i >= M * nb) return;
    int m = i / nb, b = i - m * nb;
    __global const float *g = dy + (long)m * rows;
    float16 acc_lo = (float16)(0.0f), acc_hi = (float16)(0.0f);
    for (int r = 0; r < rows; r++) {
        float16 lo, hi;
        quant_block(qtype, scales, quants, (long)r * nb + b, &lo, &hi);
        acc_lo = g[r] * lo + acc_lo;
        acc_hi = g[r] * hi + acc_hi;
    }
    __global float *o = dx + (long)m * cols + b * 32;
    vstore16(acc_lo, 0, o);
    vstore16(acc_hi, 1, o);
}
