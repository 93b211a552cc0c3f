// exp without builtins, for kernels that call exp once per value.
//
// PoCL's pip build calls OpenCL builtins such as exp() out of line (a real
// function call per value, and no vectorizing across work-items), which
// made exp the slowest part of silu.cl and cross_entropy.cl. This one is
// plain arithmetic, so it inlines and vectorizes:
//     exp(x) = 2^k * e^r,   k = round(x / ln 2),   r = x - k ln 2, |r| <= 0.35
// r is computed in two steps (ln 2 = LN2_HI + LN2_LO, LN2_HI has few bits,
// so k * LN2_HI is exact) and e^r by its Taylor polynomial to r^7 (relative
// error < 1e-7); 2^k goes straight into the exponent bits. Adding 1.5 * 2^23
// rounds to an integer (do not build with -cl-fast-relaxed-math: it would
// fold that away). Results: within 2 ulp of exp; 0 below x = -87 (where exp
// is denormal or 0), inf above 88; NaN stays NaN (no comparison drops it).
#ifndef EXP_POLY_CL
#define EXP_POLY_CL

inline float exp_poly(float x) {
    float xc = x > 88.0f ? 88.0f : x;
    xc = xc < -87.0f ? -87.0f : xc;
    float big = xc * 1.44269504f + 12582912.0f;       // x / ln 2 + 0x1.8p23
    float kf = big - 12582912.0f;                      // k = round(x / ln 2)
    int ki = as_int(big) - 0x4B400000;                 // the same, as an int
    float r = xc - kf * 0.693145751953125f;            // LN2_HI
    r = r - kf * 1.428606765330187e-6f;                // LN2_LO
    float p = 1.98412698e-4f;                          // 1 / 7!
    p = p * r + 1.38888889e-3f;                        // 1 / 6!
    p = p * r + 8.33333333e-3f;
    p = p * r + 4.16666667e-2f;
    p = p * r + 1.66666667e-1f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    float e = p * as_float((ki + 127) << 23);          // e^r * 2^k
    return x < -87.0f ? 0.0f : (x > 88.0f ? INFINITY : e);
}

#ifdef EXP_POLY_TEST
// y = exp_poly(x) on n values: for tests/ops/test_exp_poly.py only (built
// with -DEXP_POLY_TEST; the files that include this one never see it).
__kernel void exp_poly_forward(__global const float *x, __global float *y,
                               const int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = exp_poly(x[i]);
}
#endif

#endif
