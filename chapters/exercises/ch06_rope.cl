// Chapter 06, exercise 4: rotary position embedding, as an OpenCL kernel.
//
//   x and out are (rows, d) float32 arrays, row-major, d even; rows = R * S
//   folds R sequences of S positions, so row `row` sits at position
//   m = row % S. Its d values form d / 2 pairs: pair i is (x[2i], x[2i+1]),
//   and it turns by the angle m * theta_i, theta_i = base^(-2i / d):
//       out[2i]     = x[2i] cos(angle) - x[2i+1] sin(angle)
//       out[2i + 1] = x[2i] sin(angle) + x[2i+1] cos(angle)
//
// Work-items: the global size is (rows * d / 2,), one work-item per pair:
// work-item p turns pair p % (d / 2) of row p / (d / 2). The size is
// rounded up to a multiple of the local size (64): return at once when p
// is past the last pair.
//
// Check it from the chapter:
//   from checks.ch06 import check_4
//   check_4("exercises/ch06_rope.cl")

__kernel void rope_rotate(__global const float *x, __global float *out,
                          const int rows, const int S, const int d,
                          const float base) {
    int p = get_global_id(0);
    // your code here: find the row, its position m and the pair i; compute
    // the angle (pow, cos and sin exist in OpenCL C), then write both
    // values of the pair
}
