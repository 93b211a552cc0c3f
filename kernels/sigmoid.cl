// sigmoid(x) = 1 / (1 + exp(-x)) and silu(x) = x sigmoid(x), for the kernels
// that need them inline (silu.cl, swiglu.cl, decode.cl).
#ifndef SIGMOID_CL
#define SIGMOID_CL

#include "exp_poly.cl"   // exp without a builtin call (PoCL), see there

// exp of -|x| only, which never overflows, whatever the sign of x:
//   x >= 0: 1 / (1 + e^-x)            x < 0: e^x / (1 + e^x)
// Both sides share e = e^-|x| and one division; a select picks the
// numerator instead of an if, so that a loop over many values vectorizes.
// (-|x| is written out: the builtin fabs is a function call on PoCL.)
inline float stable_sigmoid(float x) {
    float e = exp_poly(x < 0.0f ? x : -x);           // e^-|x|, in (0, 1]
    return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}

// SiLU (swish), the gate of SwiGLU: silu.cl's forward, and silu(a) * b in
// swiglu.cl and decode.cl, so the three give the same bits.
inline float silu(float x) { return x * stable_sigmoid(x); }

#endif
