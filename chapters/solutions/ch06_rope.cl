// Reference answer to chapter 06, exercise 4: RoPE, one work-item per pair.
//   x and out are (rows, d), rows = R * S; row `row` sits at m = row % S.
// Every work-item computes its own angle, cos and sin: kernels/rope.cl
// instead computes them once per (position, pair) into a table that every
// head and layer reads, and turns a whole row per work-item.

__kernel void rope_rotate(__global const float *x, __global float *out,
                          const int rows, const int S, const int d,
                          const float base) {
    int p = get_global_id(0);
    int pairs = d / 2;
    if (p >= rows * pairs) return;         // a padding work-item
    int row = p / pairs;
    int i = p - row * pairs;               // the pair within its row
    int m = row % S;                       // the row's position
    float theta = pow(base, -(float)(2 * i) / (float)d);
    float angle = (float)m * theta;
    float c = cos(angle), s = sin(angle);
    long at = (long)row * d + 2 * i;       // long: rows * d may pass 2^31
    float x0 = x[at], x1 = x[at + 1];
    out[at] = x0 * c - x1 * s;
    out[at + 1] = x0 * s + x1 * c;
}
