// Batched matrix product C = A @ B with strided operands.
//   A is (batch, M, K): element (b, i, k) at A[b*a_bs + i*a_rs + k*a_cs]
//   B is (batch, K, N): element (b, k, j) at B[b*b_bs + k*b_rs + j*b_cs]
//   C is (batch, M, N), contiguous.
// Strides let one kernel serve A @ B, A @ B^T and A^T @ B (the backward
// products) without copying a transpose; b_bs = 0 broadcasts B.
//
// Three rungs compute the same product, simplest first:
//   matmul_forward        one value of C per work-item (read it first)
//   matmul_register_tile  a 4 x 8 block of C per work-item, in registers
//   matmul_tiled          the block in vector registers, shaped for the
//                         device, on operands packed into panels (the fast one)
// and matmul_few_rows serves an A of a few rows (decoding, one token).
//
// Global size (N, batch*M): one work-item computes one C value.
// This is the simple, readable version; it is the oracle for faster ones.

__kernel void matmul_forward(__global const float *A, __global const float *B,
                             __global float *C,
                             const int batch, const int M, const int N,
                             const int K,
                             const int a_bs, const int a_rs, const int a_cs,
                             const int b_bs, const int b_rs, const int b_cs) {
    int j = get_global_id(0);          // column of C
    int r = get_global_id(1);          // (batch, row) of C, flattened
    if (j >= N || r >= batch * M) return;
    int b = r / M;
    int i = r - b * M;
    __global const float *a = A + (long)b * a_bs + (long)i * a_rs;
    __global const float *bb = B + (long)b * b_bs + (long)j * b_cs;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc += a[(long)k * a_cs] * bb[(long)k * b_rs];
    C[(long)r * N + j] = acc;
}
// matmul_backward is two more calls of matmul_forward with other strides:
//   grad_A = grad_C @ B^T      grad_B = A^T @ grad_C

// ---------------------------------------------------------------------------
// The middle rung: a register tile, read in place (matmul_register_tile).
//
// matmul_forward loads two numbers for each multiply-add, A[i, k] and
// B[k, j]. Here one work-item computes an RT_M x RT_N block of C (4 rows by
// 8 columns) and keeps it in registers, `acc`, over the whole K loop. Per k
// it loads RT_M numbers of A's column k and RT_N numbers of B's row k into
// registers, then does RT_M * RT_N multiply-adds with them: every number
// loaded serves RT_N (or RT_M) of them, 12 loads per 32 multiply-adds
// instead of 64. The loops have constant trip counts, so the compiler
// unrolls them and keeps `acc`, `ak` and `bk` in registers.
//   * A and B are read where they are, through their strides, one float at
//     a time: A^T and B^T of the backward cost nothing, no copy is made.
//   * Bounds are tested: a row past M or a column past N reads 0 and is not
//     stored, so any M, N and K work (no packing, no shifting back).
// Each value of C is the same sum in the same order as in matmul_forward.
// matmul_tiled below adds what this rung leaves out: vector loads of VW
// floats, a tile shaped for the device, operands packed into panels when
// the caches serve them badly, and no tests inside its K loop.
// Global size (ceil(N / RT_N), batch * ceil(M / RT_M)): work-item (tj, t)
// owns columns RT_N tj .. and rows RT_M (t % PM) .. of batch t / PM.
// ---------------------------------------------------------------------------
#define RT_M 4          // rows of C per work-item (functional/matmul.py: RT_M)
#define RT_N 8          // columns of C per work-item (RT_N)

__kernel void matmul_register_tile(__global const float *A,
                                   __global const float *B, __global float *C,
                                   const int batch, const int M, const int N,
                                   const int K, const int a_bs, const int a_rs,
                                   const int a_cs, const int b_bs,
                                   const int b_rs, const int b_cs) {
    int tj = get_global_id(0);         // which block of RT_N columns
    int t = get_global_id(1);          // (batch, block of RT_M rows), flattened
    int PM = (M + RT_M - 1) / RT_M;    // blocks down one batch of C
    if (tj * RT_N >= N || t >= batch * PM) return;
    int b = t / PM;
    int i0 = (t - b * PM) * RT_M;      // the block's first row
    int j0 = tj * RT_N;                // ... and first column
    __global const float *a = A + (long)b * a_bs;
    __global const float *bb = B + (long)b * b_bs;
    float acc[RT_M][RT_N];
    for (int r = 0; r < RT_M; r++)
        for (int c = 0; c < RT_N; c++) acc[r][c] = 0.0f;
    for (int k = 0; k < K; k++) {
        float ak[RT_M], bk[RT_N];      // the tile's share of A's column k, B's row k
        for (int r = 0; r < RT_M; r++)
            ak[r] = i0 + r < M ? a[(long)(i0 + r) * a_rs + (long)k * a_cs] : 0.0f;
        for (int c = 0; c < RT_N; c++)
            bk[c] = j0 + c < N ? bb[(long)k * b_rs + (long)(j0 + c) * b_cs] : 0.0f;
        for (int r = 0; r < RT_M; r++)         // the rank-1 update of the tile
            for (int c = 0; c < RT_N; c++) acc[r][c] += ak[r] * bk[c];
    }
    for (int r = 0; r < RT_M && i0 + r < M; r++)
        for (int c = 0; c < RT_N && j0 + c < N; c++)
            C[((long)b * M + i0 + r) * N + j0 + c] = acc[r][c];
}

// ---------------------------------------------------------------------------
// The fast path: a register tile per work-item (kernels/register_tile.cl),
// in vectors, with packed panels.
//
// matmul_tiled: one work-item owns RB row panels x one column panel of C;
// a panel is MR = TILE_M rows or NR = TILE_V * VW columns. For each row
// panel it keeps the MR x NR tile of C in registers over the whole K loop:
// per k, TILE_V vector loads of B's row k, MR broadcasts of A's column k
// and MR * TILE_V multiply-adds. The B panel (K x NR) stays in L1/L2 across
// the RB row panels.
//   * A is read in place through its strides (A, or A^T for the backward):
//     the MR numbers of column k sit in MR rows, or side by side. A long A^T
//     (K > 512: the weight gradient X^T @ G over many tokens) is first
//     copied by matmul_pack_ab into zero-padded panels of MR rows; so is
//     an A of fewer rows than the tile (8-13 rows under a 14-row tile), by
//     matmul_pack_a, or by matmul_pack_ab when B is packed too.
//   * B is read in place when its rows are contiguous and VW-aligned
//     (ldb = its row stride); otherwise (B^T, odd N, or a long K) matmul_pack_b
//     first copies it into zero-padded panels (ldb = NR).
//   * No bounds tests in the K loop: the last row panel shifts back to end
//     at row M (and the last column panel, when B is in place, to column
//     N); it recomputes a few rows of the panel before and stores only its
//     own. So M >= MR when A is in place, and N >= NR when B is (python
//     checks). A packed panel needs no shift: its rows past M (for B, its
//     columns past N) are zeros, computed and not stored.
// VW, TILE_M, TILE_V are build options picked for the device
// (netcl_lite/core/tune.py); the defaults below are the AVX2 tile, 6 x 16.
// ---------------------------------------------------------------------------
#ifndef VW
#define VW 8
#endif
#ifndef TILE_M
#define TILE_M 6
#endif
#ifndef TILE_V
#define TILE_V 2
#endif
#include "register_tile.cl"
#define MR TILE_M
#define NR (TILE_V * VW)
#if VW == 16   // let the compiler use 512-bit registers where it has them
#define WIDE __attribute__((min_vector_width(512)))
#else
#define WIDE
#endif

// The packing kernels copy an operand into panels that matmul_tiled then
// reads as one contiguous stream per work-item. One work-item copies
// PACK_ROWS rows k of one panel: per-work-item costs (index arithmetic,
// divisions) are paid once per 64 rows, not per row (4-8x faster).
#define PACK_ROWS 64

// Rows k0 .. k1 of one panel of W numbers (W = MR for A, NR for B):
//     dst[k - k0][w] = src[k * ks + (first + w) * ws]    first + w < n
// and zeros past n. A whole panel of contiguous numbers (ws = 1) is a copy of
// W consecutive floats per row; once inlined, W is a constant and the
// compiler unrolls the copy into vector moves (restrict: the two never
// overlap).
void pack_rows(__global const float *restrict src, __global float *restrict dst,
               const int W, int k0, int k1, long ks, int ws, int first, int n) {
    src += (long)k0 * ks;
    if (ws == 1 && first + W <= n) {
        src += first;
        for (int k = k0; k < k1; k++, src += ks, dst += W)
            for (int w = 0; w < W; w++) dst[w] = src[w];
        return;
    }
    for (int k = k0; k < k1; k++, src += ks, dst += W)
        for (int w = 0; w < W; w++)
            dst[w] = first + w < n ? src[(long)(first + w) * ws] : 0.0f;
}

// Bp is (batch, PN, K, NR), PN = ceil(N / NR): Bp[b, p, k, c] = B[b, k, p*NR+c],
// zeros past N. Global size (batch * PN, ceil(K / PACK_ROWS)); strides make
// B^T free.
__kernel void matmul_pack_b(__global const float *restrict B,
                            __global float *restrict Bp,
                            const int batch, const int K, const int N,
                            const long b_bs, const int b_rs, const int b_cs) {
    int bp = get_global_id(0);                // bp = b * PN + p
    int k0 = get_global_id(1) * PACK_ROWS;
    int PN = (N + NR - 1) / NR;
    if (k0 >= K || bp >= batch * PN) return;
    int k1 = K - k0 < PACK_ROWS ? K : k0 + PACK_ROWS;
    int b = bp / PN;
    pack_rows(B + b * b_bs, Bp + ((long)bp * K + k0) * NR, NR, k0, k1, b_rs,
              b_cs, (bp - b * PN) * NR, N);
}

// Ap is (batch, PM, K, MR), PM = ceil(M / MR): Ap[b, p, k, r] = A[b, p*MR+r, k],
// zeros past M. Global size (batch * PM, ceil(K / PACK_ROWS)). For an A of
// fewer rows than a tile, with B in place: one panel, MR - M rows of zeros.
__kernel void matmul_pack_a(__global const float *restrict A,
                            __global float *restrict Ap,
                            const int batch, const int M, const int K,
                            const long a_bs, const int a_rs, const int a_cs) {
    int t = get_global_id(0);                 // t = b * PM + p
    int k0 = get_global_id(1) * PACK_ROWS;
    int PM = (M + MR - 1) / MR;
    if (k0 >= K || t >= batch * PM) return;
    int k1 = K - k0 < PACK_ROWS ? K : k0 + PACK_ROWS;
    int b = t / PM;
    pack_rows(A + b * a_bs, Ap + ((long)t * K + k0) * MR, MR, k0, k1, a_cs,
              a_rs, (t - b * PM) * MR, M);
}

// Both operands of a long A^T @ B, the weight gradient X^T @ G, in one launch
// (one launch fewer per product; a launch costs tens of microseconds); also
// a few-row A (matmul_pack_a) whose B must be packed too.
// Ap is (batch, PM, K, MR), PM = ceil(M / MR): Ap[b, p, k, r] = A[b, p*MR+r, k],
// zeros past M; Bp as in matmul_pack_b, with b_batch = 1 for a shared B.
// A^T is packed because, read in place, each k of a tile is a new cache line
// 4 * M bytes after the last, of which the tile uses MR numbers.
// Global size (batch * PM + b_batch * PN, ceil(K / PACK_ROWS)): A's panels
// first, then B's.
__kernel void matmul_pack_ab(__global const float *restrict A,
                             __global const float *restrict B,
                             __global float *restrict Ap,
                             __global float *restrict Bp,
                             const int batch, const int b_batch, const int M,
                             const int N, const int K, const long a_bs,
                             const int a_rs, const int a_cs, const long b_bs,
                             const int b_rs, const int b_cs) {
    int t = get_global_id(0);
    int k0 = get_global_id(1) * PACK_ROWS;
    int PM = (M + MR - 1) / MR, PN = (N + NR - 1) / NR;
    if (k0 >= K || t >= batch * PM + b_batch * PN) return;
    int k1 = K - k0 < PACK_ROWS ? K : k0 + PACK_ROWS;
    if (t < batch * PM) {                     // t = b * PM + p
        int b = t / PM;
        pack_rows(A + b * a_bs, Ap + ((long)t * K + k0) * MR, MR, k0, k1,
                  a_cs, a_rs, (t - b * PM) * MR, M);
    } else {                                  // t - batch * PM = b * PN + p
        int bp = t - batch * PM;
        int b = bp / PN;
        pack_rows(B + b * b_bs, Bp + ((long)bp * K + k0) * NR, NR, k0, k1,
                  b_rs, b_cs, (bp - b * PN) * NR, N);
    }
}

// C (batch, M, N) = A @ B. A: element (b, i, k) at A[b*a_bs + i*a_rs + k*a_cs],
// or, when a_packed, row panel p of batch b starts at A + b*a_bs + p*K*MR
// (python passes a_rs = 1, a_cs = MR).
// B: row k of column panel p of batch b starts at
//   B + b*b_bs + p*b_ps + k*ldb     (b_ps = NR in place, K*NR when packed).
// Global size (batch * ceil(PM / RB) * PN,): the column panel varies fastest.
WIDE __kernel void matmul_tiled(__global const float *A,
                                __global const float *B, __global float *C,
                                const int batch, const int M, const int N,
                                const int K, const int RB, const long a_bs,
                                const int a_rs, const int a_cs,
                                const long b_bs, const long b_ps,
                                const int ldb, const int b_packed,
                                const int a_packed) {
    int t = get_global_id(0);
    int PM = (M + MR - 1) / MR, PN = (N + NR - 1) / NR;
    int GM = (PM + RB - 1) / RB;              // row blocks of RB panels
    if (t >= batch * GM * PN) return;
    int pn = t % PN;
    int g = (t / PN) % GM;
    int b = t / (PN * GM);
    int jn = pn * NR;                         // the first column it stores
    int j0 = b_packed || jn + NR <= N ? jn : N - NR;  // ... and computes
    __global const float *bq = B + b * b_bs + pn * b_ps - (jn - j0);
    int cols = N - jn < NR ? N - jn : NR;
    int pm_end = g * RB + RB < PM ? g * RB + RB : PM;
    for (int pm = g * RB; pm < pm_end; pm++) {
        int in = pm * MR;                     // the first row it stores
        int i0 = a_packed || in + MR <= M ? in : M - MR;  // ... and computes
        int rows = M - in < MR ? M - in : MR;
        __global const float *a = a_packed ? A + b * a_bs + (long)pm * K * MR
                                           : A + b * a_bs + (long)i0 * a_rs;
        __global const float *bk = bq;
        floatV acc[TILE_M][TILE_V];
        TILE_ZERO(acc);
#define A_AT(r) a[(long)(r) * a_rs]
        for (int k = 0; k < K; k++) {         // the MR x NR register tile
            TILE_STEP(acc, A_AT, bk);
            a += a_cs;
            bk += ldb;
        }
#undef A_AT
        __global float *c = C + ((long)b * M + i0) * N + j0;
        if (rows == MR && jn == j0 && cols == NR && N % VW == 0) {
            // a whole, aligned tile: straight from the registers
            _Pragma("unroll") for (int r = 0; r < TILE_M; r++)
                _Pragma("unroll") for (int v = 0; v < TILE_V; v++)
                    *(__global floatV *)(c + (long)r * N + v * VW) = acc[r][v];
        } else {                              // an edge: only its own part
            float tile[TILE_M * NR] __attribute__((aligned(64)));
            TILE_STORE(acc, tile, NR);
            for (int r = in - i0; r < in - i0 + rows; r++)
                for (int j = jn - j0; j < jn - j0 + cols; j++)
                    c[(long)r * N + j] = tile[r * NR + j];
        }
    }
}

// ---------------------------------------------------------------------------
// Few rows: C = A @ B when A has fewer than 8 rows (M < FEW_ROWS, python;
// the same rule for every tile). Decoding with a KV cache multiplies one
// token's row by every weight matrix; a tile of MR rows would compute
// padding, and matmul_forward walks B down its columns (measured:
// 1 x 128 @ 128 x 1024 took 0.2-0.4 ms in it).
// Here one work-item owns nv vectors (nv * VW consecutive columns) of one
// row of C and streams B's rows, reading each number of B once per row:
//     acc[v] += A[b, i, k] * B[b, k, j + v*VW .. j + v*VW + VW)    k < K
// nv = FEW_V (8), or fewer when N is narrower: eight independent sums keep
// the FMA units busy, and each row of B gives a work-item 4 cache lines at
// once (measured at 1 x 128 @ 128 x 1024: 1 vector 37-51 us, 4 vectors 18-21,
// 8 vectors 11: B's rows sit 4 KB apart, so every row is a fresh cache miss
// and the more lines a work-item asks for at once, the better).
// vec = 1: B's rows are contiguous and VW-aligned and N % VW == 0 (python
// checks); the last work-item shifts back to end at column N and stores only
// its own vectors. Otherwise a scalar loop reads B through its strides.
// Global size (batch * M * ceil(N / (nv * VW)),): columns vary fastest.
// ---------------------------------------------------------------------------
#ifndef FEW_V
#define FEW_V 8
#endif
WIDE __kernel void matmul_few_rows(__global const float *A,
                                   __global const float *B, __global float *C,
                                   const int batch, const int M, const int N,
                                   const int K, const long a_bs,
                                   const int a_rs, const int a_cs,
                                   const long b_bs, const int b_rs,
                                   const int b_cs, const int vec) {
    int t = get_global_id(0);
    int nv = N / VW < FEW_V ? N / VW : FEW_V;
    nv = nv > 0 ? nv : 1;
    int NC = nv * VW;                         // columns per work-item
    int PN = (N + NC - 1) / NC;
    if (t >= batch * M * PN) return;
    int r = t / PN;                           // (batch, row) of C, flattened
    int jn = (t - r * PN) * NC;               // the first column it stores
    int b = r / M;
    __global const float *a = A + b * a_bs + (long)(r - b * M) * a_rs;
    if (vec) {
        int j0 = jn + NC <= N ? jn : N - NC;  // ... and the first it computes
        __global const float *bk = B + b * b_bs + j0;
        floatV acc[FEW_V];
        _Pragma("unroll") for (int v = 0; v < FEW_V; v++) acc[v] = (floatV)(0.0f);
        for (int k = 0; k < K; k++) {
            floatV ak = (floatV)(a[(long)k * a_cs]);
            _Pragma("unroll") for (int v = 0; v < FEW_V; v++)
                if (v < nv)                   // the same branch every k
                    acc[v] = ak * *(__global const floatV *)(bk + v * VW) + acc[v];
            bk += b_rs;
        }
        __global float *c = C + (long)r * N + j0;
        _Pragma("unroll") for (int v = 0; v < FEW_V; v++)
            if (v < nv && j0 + v * VW >= jn)
                *(__global floatV *)(c + v * VW) = acc[v];
    } else {                                  // any strides, one column at a time
        int cols = N - jn < NC ? N - jn : NC;
        __global const float *bj = B + b * b_bs + (long)jn * b_cs;
        __global float *c = C + (long)r * N + jn;
        for (int q = 0; q < cols; q++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++)
                acc = a[(long)k * a_cs] * bj[(long)k * b_rs] + acc;
            c[q] = acc;
            bj += b_cs;
        }
    }
}
