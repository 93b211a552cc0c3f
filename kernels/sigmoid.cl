// sigmoid(x) = 1 / (1 + exp(-x)), for the kernels that need it inline
// (silu.cl, swiglu.cl).

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
