// Batched matrix product C = A @ B with strided operands.
//   A is (batch, M, K): element (b, i, k) at A[b*a_bs + i*a_rs + k*a_cs]
//   B is (batch, K, N): element (b, k, j) at B[b*b_bs + k*b_rs + j*b_cs]
//   C is (batch, M, N), contiguous.
// Strides let one kernel serve A @ B, A @ B^T and A^T @ B (the backward
// products) without copying a transpose; b_bs = 0 broadcasts B.
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
    __global const float *a = A + b * a_bs + i * a_rs;
    __global const float *bb = B + b * b_bs + j * b_cs;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc += a[k * a_cs] * bb[k * b_rs];
    C[(long)r * N + j] = acc;
}
// matmul_backward is two more calls of matmul_forward with other strides:
//   grad_A = grad_C @ B^T      grad_B = A^T @ grad_C

// ---------------------------------------------------------------------------
// The fast path: packed panels, register blocking, cache blocking.
//
// 1. matmul_pack_a copies A into row panels of MR = 6 rows, k-major:
//      Ap is (batch, PM, K, MR), PM = ceil(M / MR); Ap[b, p, k, r] = A[b, p*MR+r, k]
//    matmul_pack_b copies B into column panels of NR = 16 columns:
//      Bp is (batch, PN, K, NR), PN = ceil(N / NR); Bp[b, p, k, c] = B[b, k, p*NR+c]
//    Rows and columns past M and N are zeros, so the inner loop never tests
//    bounds, and every read in it is contiguous. Strides make transposes free.
// 2. matmul_packed: one work-item owns RB row panels x one column panel, a
//    (RB*MR, NR) block of C. For each row panel it keeps the 6 x 16 tile in
//    twelve float8 registers over the whole K loop: per k, two float8 loads
//    of B, six broadcasts of A, twelve multiply-adds (96 FLOP per 8 loads).
//    The B panel (K x 16) stays in L1/L2 across the RB row panels; the 64
//    work-items of a group share one row block of A, which stays in L2.
// No builtins in the inner loop: PoCL's pip build calls them out of line.
// ---------------------------------------------------------------------------
#define MR 6
#define NR 16

// Global size (K, batch * PM): k varies fastest, so the division that splits
// the second index is shared by a work-group's row of work-items.
__kernel void matmul_pack_a(__global const float *A, __global float *Ap,
                            const int batch, const int M, const int K,
                            const int a_bs, const int a_rs, const int a_cs) {
    int k = get_global_id(0);
    int bp = get_global_id(1);                // bp = b * PM + p
    int PM = (M + MR - 1) / MR;
    if (k >= K || bp >= batch * PM) return;
    int b = bp / PM;
    int p = bp - b * PM;
    __global const float *src = A + (long)b * a_bs + (long)k * a_cs;
    __global float *dst = Ap + ((long)bp * K + k) * MR;
    for (int r = 0; r < MR; r++) {
        int i = p * MR + r;
        dst[r] = i < M ? src[(long)i * a_rs] : 0.0f;
    }
}

// Global size (K, batch * PN), as for matmul_pack_a.
__kernel void matmul_pack_b(__global const float *B, __global float *Bp,
                            const int batch, const int K, const int N,
                            const int b_bs, const int b_rs, const int b_cs) {
    int k = get_global_id(0);
    int bp = get_global_id(1);                // bp = b * PN + p
    int PN = (N + NR - 1) / NR;
    if (k >= K || bp >= batch * PN) return;
    int b = bp / PN;
    int p = bp - b * PN;
    __global const float *src = B + (long)b * b_bs + (long)k * b_rs;
    __global float *dst = Bp + ((long)bp * K + k) * NR;
    for (int c = 0; c < NR; c++) {
        int j = p * NR + c;
        dst[c] = j < N ? src[(long)j * b_cs] : 0.0f;
    }
}

// C (batch, M, N) = A @ B from the packed panels. ap_bs, bp_bs are the
// panel buffers' batch strides (0 when one matrix serves every batch).
// Global size (batch * ceil(PM / RB) * PN,): the column panel varies fastest.
__kernel void matmul_packed(__global const float *Ap, __global const float *Bp,
                            __global float *C, const int batch, const int M,
                            const int N, const int K, const int RB,
                            const long ap_bs, const long bp_bs) {
    int t = get_global_id(0);
    int PM = (M + MR - 1) / MR, PN = (N + NR - 1) / NR;
    int GM = (PM + RB - 1) / RB;              // row blocks of RB panels
    if (t >= batch * GM * PN) return;
    int pn = t % PN;
    int g = (t / PN) % GM;
    int b = t / (PN * GM);
    __global const float *bp = Bp + b * bp_bs + (long)pn * K * NR;
    int pm_end = g * RB + RB < PM ? g * RB + RB : PM;
    for (int pm = g * RB; pm < pm_end; pm++) {
        __global const float *ap = Ap + b * ap_bs + (long)pm * K * MR;
        float8 c00 = 0, c01 = 0, c10 = 0, c11 = 0, c20 = 0, c21 = 0;
        float8 c30 = 0, c31 = 0, c40 = 0, c41 = 0, c50 = 0, c51 = 0;
        for (int k = 0; k < K; k++) {         // the 6 x 16 register tile
            float8 b0 = *(__global const float8 *)(bp + k * NR);
            float8 b1 = *(__global const float8 *)(bp + k * NR + 8);
            __global const float *a = ap + k * MR;
            float8 a0 = (float8)(a[0]);
            c00 = a0 * b0 + c00; c01 = a0 * b1 + c01;  // a*b+c: clang emits FMA
            float8 a1 = (float8)(a[1]);
            c10 = a1 * b0 + c10; c11 = a1 * b1 + c11;
            float8 a2 = (float8)(a[2]);
            c20 = a2 * b0 + c20; c21 = a2 * b1 + c21;
            float8 a3 = (float8)(a[3]);
            c30 = a3 * b0 + c30; c31 = a3 * b1 + c31;
            float8 a4 = (float8)(a[4]);
            c40 = a4 * b0 + c40; c41 = a4 * b1 + c41;
            float8 a5 = (float8)(a[5]);
            c50 = a5 * b0 + c50; c51 = a5 * b1 + c51;
        }
        // registers -> C, inside bounds
        float tile[MR][NR] __attribute__((aligned(32)));
        *(float8 *)&tile[0][0] = c00; *(float8 *)&tile[0][8] = c01;
        *(float8 *)&tile[1][0] = c10; *(float8 *)&tile[1][8] = c11;
        *(float8 *)&tile[2][0] = c20; *(float8 *)&tile[2][8] = c21;
        *(float8 *)&tile[3][0] = c30; *(float8 *)&tile[3][8] = c31;
        *(float8 *)&tile[4][0] = c40; *(float8 *)&tile[4][8] = c41;
        *(float8 *)&tile[5][0] = c50; *(float8 *)&tile[5][8] = c51;
        __global float *c = C + ((long)b * M + pm * MR) * N + pn * NR;
        int rows = M - pm * MR < MR ? M - pm * MR : MR;
        int cols = N - pn * NR < NR ? N - pn * NR : NR;
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < cols; j++) c[(long)r * N + j] = tile[r][j];
    }
}
