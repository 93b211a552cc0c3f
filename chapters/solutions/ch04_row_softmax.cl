// Reference answer to chapter 04, exercise 4: the softmax of every row.
//   x and y are (R, C); global size (R,): one work-item per row.
// Three passes over the row, one running sum: correct, and simpler than
// kernels/softmax.cl, which keeps its sum in 8 lanes (more exact and
// about 3x faster on a CPU, see the top of that file).

__kernel void row_softmax(__global const float *x, __global float *y,
                          const int R, const int C) {
    int r = get_global_id(0);
    if (r >= R) return;                    // a padding work-item
    __global const float *xr = x + (long)r * C;   // long: R * C may pass 2^31
    __global float *yr = y + (long)r * C;
    float m = -INFINITY;
    for (int j = 0; j < C; j++) m = fmax(m, xr[j]);
    float s = 0.0f;
    for (int j = 0; j < C; j++) s += exp(xr[j] - m);   // exp(x - m) <= 1
    for (int j = 0; j < C; j++) yr[j] = exp(xr[j] - m) / s;
}
