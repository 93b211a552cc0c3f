// The register tile shared by matmul.cl and flash_attention.cl.
//
// A work-item keeps a TILE_M x (TILE_V * VW) block of a product in
// TILE_M * TILE_V vector registers, `acc`, and adds one rank-1 update per k:
//
//     acc[r][v] += a[r] * b[v]     r < TILE_M (a broadcast), v < TILE_V
//
// where a[r] is one number of A's column k and b[v] is VW consecutive
// numbers of B's row k. Per k: TILE_V vector loads, TILE_M broadcasts and
// TILE_M * TILE_V multiply-adds, all in registers (6 x 2 float8 = 12
// accumulators fill 16 AVX2 registers; 6 x 4 float16 suits AVX-512).
//
// The file that includes this one defines the tile's shape first:
//     #define VW 8          vector width: 4, 8 or 16
//     #define TILE_M 6      rows (broadcasts per k)
//     #define TILE_V 2      vectors per row
// (matmul.cl takes them as build options, chosen for the device;
// flash_attention.cl fixes 6 x 2 float8). The loops below have constant
// trip counts and are unrolled by the compiler, so `acc` lives in registers.
// Plain a * b + c, no builtins: clang turns it into one FMA, whereas PoCL's
// pip build calls builtins such as fma() or vload8() out of line.
//
// Index convention in these kernels: sizes, counts and loop indices are
// int; an offset into a buffer that multiplies two of them is long.
#ifndef REGISTER_TILE_CL
#define REGISTER_TILE_CL

#define VEC_OF_(n) float##n
#define VEC_OF(n) VEC_OF_(n)
#define floatV VEC_OF(VW)                 // float8 when VW is 8

// acc[r][v] = 0 for the whole tile
#define TILE_ZERO(acc)                                                       \
    _Pragma("unroll") for (int r_ = 0; r_ < TILE_M; r_++)                    \
        _Pragma("unroll") for (int v_ = 0; v_ < TILE_V; v_++)                \
            acc[r_][v_] = (floatV)(0.0f)

// acc[r][v] += A_AT(r) * b[v * VW .. v * VW + VW): one k of the product.
// A_AT(r) is an expression for row r's number (a macro argument, so the
// same tile reads A from global or private memory); b points at B's row k
// in global memory, VW-aligned.
#define TILE_STEP(acc, A_AT, b)                                              \
    do {                                                                     \
        floatV b_[TILE_V];                                                   \
        _Pragma("unroll") for (int v_ = 0; v_ < TILE_V; v_++)                \
            b_[v_] = *(__global const floatV *)((b) + v_ * VW);              \
        _Pragma("unroll") for (int r_ = 0; r_ < TILE_M; r_++) {              \
            floatV a_ = (floatV)(A_AT(r_));                                  \
            _Pragma("unroll") for (int v_ = 0; v_ < TILE_V; v_++)            \
                acc[r_][v_] = a_ * b_[v_] + acc[r_][v_];                     \
        }                                                                    \
    } while (0)

// Row r of the tile, vector v, to or from private floats: p[r * ld + v * VW ..]
#define TILE_STORE(acc, p, ld)                                               \
    _Pragma("unroll") for (int r_ = 0; r_ < TILE_M; r_++)                    \
        _Pragma("unroll") for (int v_ = 0; v_ < TILE_V; v_++)                \
            *(__private floatV *)((p) + r_ * (ld) + v_ * VW) = acc[r_][v_]

#define TILE_LOAD(acc, p, ld)                                                \
    _Pragma("unroll") for (int r_ = 0; r_ < TILE_M; r_++)                    \
        _Pragma("unroll") for (int v_ = 0; v_ < TILE_V; v_++)                \
            acc[r_][v_] = *(__private const floatV *)((p) + r_ * (ld) + v_ * VW)

#endif
