// A row's max and its sum of exps, in 8 lanes: shared by softmax.cl and
// cross_entropy.cl (rms_row.cl sums squares the same way).
//
// Lane j takes the entries j, j + 8, j + 16, ... of the row's first
// n - n % 8 values; the 8 lane results are then combined in a fixed order,
// and the last n % 8 values after them, so the result is the same bits on
// every run. The compiler keeps the 8 lanes in one SIMD register, and the 8
// sums are independent chains of additions (one running sum is a chain of n
// dependent additions, 4 cycles each). A running float32 sum also loses
// accuracy: at n = 20000 one chain was off by 1.5e-5 of the largest value,
// the lanes by 4e-7, and once it holds a large term every later term below
// half a unit in its last place is rounded away; in lanes only that term's
// own lane loses them.
#ifndef ROW_LANES_CL
#define ROW_LANES_CL

#ifndef ROW_EXP
#define ROW_EXP exp
#endif

// The largest of x[0 .. n) (-inf for n = 0); NaN when any of them is NaN
// (compared with x != x: no builtin call).
inline float row_max(__global const float *x, const int n) {
    int n8 = n - n % 8;
    float lane[8];
    for (int j = 0; j < 8; j++) lane[j] = -INFINITY;
    for (int j0 = 0; j0 < n8; j0 += 8)
        for (int j = 0; j < 8; j++) {
            float v = x[j0 + j];
            lane[j] = v > lane[j] || v != v ? v : lane[j];
        }
    float m = -INFINITY;
    for (int j = 0; j < 8; j++) m = lane[j] > m || lane[j] != lane[j] ? lane[j] : m;
    for (int j = n8; j < n; j++) m = x[j] > m || x[j] != x[j] ? x[j] : m;
    return m;
}

// e[j] = exp(x[j] - m) for j < n, and the sum of them (returned), in lanes.
// The exp is ROW_EXP: the builtin unless the including file defines it
// first (cross_entropy.cl: #define ROW_EXP exp_poly).
inline float row_exp_sum(__global const float *x, const float m,
                         __global float *e, const int n) {
    int n8 = n - n % 8;
    float lane[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (int j0 = 0; j0 < n8; j0 += 8)
        for (int j = 0; j < 8; j++) {
            float ej = ROW_EXP(x[j0 + j] - m);
            e[j0 + j] = ej;
            lane[j] += ej;
        }
    float s = 0.0f;
    for (int j = 0; j < 8; j++) s += lane[j];
    for (int j = n8; j < n; j++) {      // the last n % 8 values
        float ej = ROW_EXP(x[j] - m);
        e[j] = ej;
        s += ej;
    }
    return s;
}

#endif
