// Chapter 04, exercise 4: the softmax of every row, as an OpenCL kernel.
//
//   x and y are (R, C) float32 arrays, row-major: row r starts at x + r * C.
//   y[r, j] = exp(x[r, j] - m) / sum over k of exp(x[r, k] - m),
//   where m is the largest x[r, k] of the row.
//
// Work-items: the global size is (R,), one work-item per row, rounded up to
// a multiple of the local size (64): return at once when r >= R.
// Some x[r, k] are -INFINITY (masked keys): exp(-INFINITY - m) is 0.
//
// Check it from the chapter:
//   from checks.ch04 import check_4
//   check_4("exercises/ch04_row_softmax.cl")

__kernel void row_softmax(__global const float *x, __global float *y,
                          const int R, const int C) {
    int r = get_global_id(0);
    // your code here: three loops over the C values of row r
    //   1. m = the row's largest value
    //   2. s = the sum of exp(x - m)
    //   3. y = exp(x - m) / s
}
