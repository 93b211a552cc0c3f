// One query row's attention, one key at a time: its dot products and the
// step of the online softmax. Shared by flash_attention_simple.cl (training)
// and decode.cl (a decoding step), so that both walk a row the same way.
//
// The exp is a parameter: the file that includes this one may define
//     #define ROW_EXP exp_poly
// first (exp_poly.cl); without it the step uses the builtin exp. Training
// keeps exp; decode.cl uses exp_poly, plain arithmetic that PoCL inlines
// and vectorizes where it calls the builtin out of line (a function call
// per key). exp_poly is within 2 ulp of exp, so a decoding step's attention
// row can differ from the training kernel's in the last bits of float32
// (the tests compare the two at 1e-5); each path keeps its exp, so training's
// stored numbers stay what they are.
#ifndef ATTENTION_ROW_CL
#define ATTENTION_ROW_CL

#ifndef ROW_EXP
#define ROW_EXP exp
#endif

// a . b over n values, added in order (one chain: the same bits on every
// run and in both files).
inline float row_dot(__global const float *a, __global const float *b,
                     const int n) {
    float s = 0.0f;
    for (int c = 0; c < n; c++) s += a[c] * b[c];
    return s;
}

// One key of the online softmax, score s and value row vj (DV,):
//   m: the largest score so far; l: the sum of exp(s_j - m) so far;
//   o (DV,): the sum of exp(s_j - m) v_j so far.
// A larger score rescales l and o by exp(m_old - m_new), which is 0 for
// the first key (m_old = -inf). The max is a comparison, not fmax: no
// builtin call (a NaN score leaves m as it is, as fmax would).
inline void online_step(const float s, __global const float *vj, const int DV,
                        float *m, float *l, __global float *o) {
    float m_new = s > *m ? s : *m;
    float alpha = ROW_EXP(*m - m_new);
    float p = ROW_EXP(s - m_new);
    *l = alpha * *l + p;
    for (int c = 0; c < DV; c++) o[c] = alpha * o[c] + p * vj[c];
    *m = m_new;
}

#endif
