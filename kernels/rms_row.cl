// The 1 / rms of one row, shared by rms_norm.cl (rms_norm_forward) and
// decode.cl (the norm before each of its products):
//   row_rstd(x, D, eps) = 1 / sqrt(mean_j x[j]^2 + eps),   x is (D,)
// The sum runs in 8 lanes, as every sum in rms_norm.cl: lane j adds the
// squares of x[j], x[j + 8], x[j + 16], ..., then the lanes are added in
// order and the last D % 8 values after them. The compiler turns the lanes
// into one SIMD register, and the 8 running sums are independent (one
// running sum is a chain of D dependent additions). Both files add in this
// order, so the training forward and a decoding step normalise a row to the
// same bits. rsqrt is a builtin: called once per row, not in a loop.
#ifndef RMS_ROW_CL
#define RMS_ROW_CL

inline float row_rstd(__global const float *x, const int D, const float eps) {
    float lane[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    int d8 = D - D % 8;
    for (int j0 = 0; j0 < d8; j0 += 8)
        for (int j = 0; j < 8; j++) lane[j] += x[j0 + j] * x[j0 + j];
    float ss = 0.0f;
    for (int j = 0; j < 8; j++) ss += lane[j];
    for (int j = d8; j < D; j++) ss += x[j] * x[j];
    return rsqrt(ss / D + eps);
}

#endif
