// Runs of values: the elementwise kernels (elementwise.cl, silu.cl,
// swiglu.cl, adamw.cl) give each work-item one contiguous run of the n
// values, [run_start(n), run_stop(n)), the n values split evenly over the
// work-items launched (the global size, padding included; the host chooses
// it, core/tensor_ops.py: work_items):
//   - on a CPU about 256 values each: the loop over them is a plain loop,
//     which the compiler turns into SIMD (8 or 16 values per instruction).
//     One value per work-item, as on a GPU, ran 5-10x slower on PoCL: its
//     work-group loop did not vectorize, and each work-item costs overhead.
//   - on a GPU one value each (start = id, stop = id + 1): neighbouring
//     work-items then read neighbouring addresses, as a GPU wants.
// Padding work-items get an empty run (start >= n), so none checks its id.
// Compute run_stop once, before the loop, not in its condition.
#ifndef RUNS_CL
#define RUNS_CL

inline int run_chunk(const int n) {
    return (n + get_global_size(0) - 1) / get_global_size(0);
}

inline int run_start(const int n) { return get_global_id(0) * run_chunk(n); }

inline int run_stop(const int n) {
    int stop = run_start(n) + run_chunk(n);
    return stop < n ? stop : n;
}

#endif
