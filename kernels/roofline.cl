// Two measurements of the device itself, for the roofline (chapter 13):
// its peak arithmetic rate and its memory bandwidth. Neither computes
// anything useful; each is built to be limited by one resource only.
//
// fma_loop: the peak rate. out is (n,); global size (n,), one work-item
//   per value (the padding work-items return at once).
//   Each work-item keeps NACC independent accumulators of VW floats
//   (VW from the build option -DVW=4, 8 or 16: the vector registers'
//   width) and updates each iters times with x <- x * a + b, one fused
//   multiply-add (2 FLOPs) per lane. Written as plain x * a + b, which the
//   compiler contracts to one FMA instruction (the builtin fma() is a
//   function call on some PoCL builds, see flash_attention.cl). The chains are independent so the
//   FMA units never wait for a result: an FMA takes about 4 cycles and a
//   core starts about 2 per cycle, so 8 or more chains keep it busy. The
//   work-item reads nothing from memory and writes one float at the end.
//   FLOPs per launch: 2 * iters * NACC * VW * n.
//   Accumulator j starts at x0 = (id % 8) + j, so after n updates it holds
//   a^n x0 + b (a^n - 1) / (a - 1), and out[id] is VW times the sum of
//   the NACC values (tests/core/test_roofline.py checks that closed form).
//   The compiler cannot shorten the loop: a, b and iters arrive at run time.
//
// copy: the bandwidth. dst and src are (n,): dst = src.
//   Work-items as in runs.cl: each owns a contiguous run of values (about
//   256 on a CPU, where the loop turns into vector loads and stores; one
//   on a GPU, where neighbouring work-items read neighbouring addresses).
//   Bytes per launch, as the program counts them: 4 n read + 4 n written.

#include "runs.cl"

#ifndef VW
#define VW 8
#endif
#define NACC 12
#define JOIN(a, b) a##b
#define VEC_OF(w) JOIN(float, w)
#define VEC VEC_OF(VW)

__kernel void fma_loop(__global float *out, const float a, const float b,
                       const int iters, const int n) {
    const int id = get_global_id(0);
    if (id >= n) return;
    VEC acc[NACC];
#pragma unroll
    for (int j = 0; j < NACC; j++) acc[j] = (VEC)((float)(id % 8 + j));
    const VEC va = (VEC)(a), vb = (VEC)(b);
    for (int t = 0; t < iters; t++) {
#pragma unroll
        for (int j = 0; j < NACC; j++) acc[j] = acc[j] * va + vb;
    }
    VEC sum = acc[0];
#pragma unroll
    for (int j = 1; j < NACC; j++) sum += acc[j];
    float total = 0.0f;
    __private float *lanes = (__private float *)&sum;
    for (int l = 0; l < VW; l++) total += lanes[l];
    out[id] = total;
}

__kernel void copy(__global float *dst, __global const float *src,
                   const int n) {
    int start = run_start(n), stop = run_stop(n);
    for (int i = start; i < stop; i++) dst[i] = src[i];
}
