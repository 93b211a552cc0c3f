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
