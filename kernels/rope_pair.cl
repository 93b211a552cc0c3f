// One RoPE rotation, shared by rope.cl (every pair of every row) and
// decode.cl (the new row's q and k): the pair (x0, x1) turned by the angle
// whose cosine is c and sine is s,
//   out0 = x0 c - x1 s,   out1 = x0 s + x1 c.
// The backward turns by -angle: rope_pair(g0, g1, c, -s). Each file writes
// the pair itself, so both give the same bits for the same (x0, x1, c, s).
#ifndef ROPE_PAIR_CL
#define ROPE_PAIR_CL

inline float2 rope_pair(const float x0, const float x1, const float c,
                        const float s) {
    return (float2)(x0 * c - x1 * s, x0 * s + x1 * c);
}

#endif
