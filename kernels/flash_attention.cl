// Fused attention: O = softmax(q k^T / sqrt(d) + M) v without the S x S matrix.
//   q, o  are (BH, Sq, D) and (BH, Sq, DV)    BH = B * H query heads
//   k, v  are (BHKV, Sk, D) and (BHKV, Sk, DV) H = HKV * rep
// GQA: query head h reads kv head h / rep (no copies of k and v).
// causal: query i sees key j iff j <= i + (Sk - Sq); a row that sees nothing
// gives zeros (the composed path's rule, kernels/softmax.cl).
// window W > 0 (sliding-window attention, causal only): query i sees only
// p - W < j <= p, p = i + (Sk - Sq) its own position. A work-item starts at
// the panel of the oldest key its first row sees and stops after the newest
// its last row sees, so the blocks outside every row's window are never
// read: the work per row is O(W), not O(Sk). window = 0: no window.
//
// The simple version is attention.py's composed ops (scores, scale, softmax,
// matmul); it is the oracle here. This file computes the same thing the way
// FlashAttention does, with CPU-friendly blocking:
//   * k is packed as K^T panels of 16 keys, kt is (BHKV, Sp/16, D, 16), and v
//     (likewise dO, q in the backward) as zero-padded rows, (BHKV, Sp, DVp):
//     every inner-loop read is contiguous and nothing tests bounds there.
//   * a forward work-item owns rt x TR = 2 x 6 query rows. Per block of
//     BK = 64 keys it computes the 12 x 64 scores as 6 x 16 register tiles
//     (the matmul kernel's tile), updates each row's running max m and sum l
//     (online softmax), and adds P V into its 12 x DV output rows. The block
//     of k and v (2 x 16 KB at d = 64) is read once for the 12 rows.
//     The tile is matmul's (kernels/register_tile.cl) in its AVX2 shape,
//     6 rows x 2 float8: TC = 16 keys per panel.
//   * scores live in base 2: s2 = q.k * (log2(e) / sqrt(d)), so p = 2^(s2 - m)
//     and the forward stores lse2 = m + log2(l) per row, which is all the
//     backward needs to rebuild any block of P.
// No builtins in the hot loops (PoCL's pip build calls them out of line):
// plain a*b+c (contracted to FMA), float8 loads through pointer casts, and
// exp2_poly below instead of exp2.

#define TR 6       // query rows of the register tile (a backward work-item's)
#define TC 16      // keys per panel (the register tile's columns)
#define BK 64      // keys per online-softmax block (four panels)
#define RT 2       // at most RT 6-row tiles per forward work-item
#define DMAX 256   // largest head dim (python falls back beyond it)
// private arrays read as float8 must sit on 32-byte boundaries
#define ALIGNED __attribute__((aligned(32)))
// the shared register tile: TR rows x TILE_V * VW = TC columns
#define VW 8
#define TILE_M TR
#define TILE_V 2
#include "register_tile.cl"

// 2^x for x <= 0 (x = -inf gives 0, NaN gives NaN), no builtins. x = k + f
// with k an integer and |f| <= 1/2; 2^f is its Taylor polynomial (error
// < 2e-7) and 2^k is built in the exponent bits. Adding 1.5 * 2^23 rounds
// to an integer. NaN (x != x) is passed through at the end.
float8 exp2_poly(float8 x) {
    float8 xc = x > (float8)(-126.0f) ? x : (float8)(-126.0f);
    float8 big = xc + 12582912.0f;                // 0x1.8p23
    float8 kf = big - 12582912.0f;                // round(xc)
    int8 ki = as_int8(big) - 0x4B400000;          // the same, as an integer
    float8 f = xc - kf;
    float8 p = 1.5403530e-4f;                     // ln2^6 / 6!
    p = p * f + 1.3333558e-3f;
    p = p * f + 9.6181291e-3f;
    p = p * f + 5.5504109e-2f;
    p = p * f + 2.4022651e-1f;
    p = p * f + 6.9314718e-1f;
    p = p * f + 1.0f;
    float8 scale = as_float8((ki + 127) << 23);   // 2^k
    float8 r = p * scale;
    r = xc > (float8)(-126.0f) ? r : (float8)(0.0f);
    return x != x ? x : r;
}

// max(a, b) per lane that keeps a NaN (plain a > b ? a : b would drop it)
float8 max_nan(float8 a, float8 b) { return ((a > b) | (a != a)) ? a : b; }

float hmax8(float8 v) {
    float4 a = ((v.lo > v.hi) | (v.lo != v.lo)) ? v.lo : v.hi;
    float2 b = ((a.lo > a.hi) | (a.lo != a.lo)) ? a.lo : a.hi;
    return (b.x > b.y || b.x != b.x) ? b.x : b.y;
}

float hsum8(float8 v) {
    float4 a = v.lo + v.hi;
    float2 b = a.lo + a.hi;
    return b.x + b.y;
}

// s[r][0..16) = sum_c a[r][c] * p[c][0..16) for r < 6: a is (6, DMAX) in
// private memory, p is one (D, 16) panel. The register tile, k = c.
void tile_6x16(__private const float *a, __global const float *p,
               const int D, __private float *s, const int lds) {
    floatV acc[TILE_M][TILE_V];
    TILE_ZERO(acc);
#define A_AT(r) a[(r) * DMAX + c]
    for (int c = 0; c < D; c++) TILE_STEP(acc, A_AT, p + (long)c * TC);
#undef A_AT
    TILE_STORE(acc, s, lds);
}

// o[r][0..DP) += sum_{j < nj} p[r][j] * v[j][0..DP) for r < 6: o is (6, DMAX)
// and p is (6, BK) in private memory, v is (nj, DP) rows with DP % 16 == 0.
// Per 16 columns: the register tile over the j loop.
void tile_acc(__private float *o, __private const float *p,
              __global const float *v, const int nj, const int DP) {
    for (int c = 0; c < DP; c += TC) {
        floatV acc[TILE_M][TILE_V];
        TILE_LOAD(acc, o + c, DMAX);
#define A_AT(r) p[(r) * BK + j]
        for (int j = 0; j < nj; j++) TILE_STEP(acc, A_AT, v + (long)j * DP + c);
#undef A_AT
        TILE_STORE(acc, o + c, DMAX);
    }
}

// How many keys (a prefix) query row i sees; 0 for i >= Sq (padding rows).
int visible_keys(int i, const int Sq, const int Sk, const int causal) {
    if (i >= Sq) return 0;
    if (!causal) return Sk;
    int n = i + (Sk - Sq) + 1;
    return n < 0 ? 0 : (n > Sk ? Sk : n);
}

// The first key query row i sees: 0 without a window, else the oldest key
// inside it. Keys first_key(i) .. visible_keys(i) - 1 are row i's.
int first_key(int i, const int Sq, const int Sk, const int window) {
    int f = window > 0 ? i + (Sk - Sq) - window + 1 : 0;
    return f > 0 ? f : 0;
}

// Scores outside row r's keys first .. n - 1 (both relative to the block)
// become -inf: the mask's two edges, one row of a block.
void mask_row(__private float *sr, const int first, const int n) {
    for (int j = 0; j < BK && j < first; j++) sr[j] = -INFINITY;
    for (int j = n < 0 ? 0 : n; j < BK; j++) sr[j] = -INFINITY;
}

// Copy rows r0 .. r0+5 of x (S, D), times c, into a (6, DMAX); zeros past S.
void load_rows(__private float *a, __global const float *x, const int r0,
               const int S, const int D, const float c) {
    for (int r = 0; r < TR; r++)
        for (int e = 0; e < D; e++)
            a[r * DMAX + e] = r0 + r < S ? x[(long)(r0 + r) * D + e] * c : 0.0f;
}

// ---------------------------------------------------------------------------
// Packing (run once per call; O(S * D) copies, never S x S).
// pack_panels: x (N, S, D) -> xt (N, Sp/16, D, 16): xt[n, t, e, c] = x[n, 16t+c, e]
// pack_rows:   x (N, S, D) -> xr (N, Sp, DP):       xr[n, s, e] = x[n, s, e]
// Entries past S or D are zeros.
// ---------------------------------------------------------------------------
__kernel void flash_attention_pack_panels(__global const float *x,
                                          __global float *xt, const int N,
                                          const int S, const int D,
                                          const int Sp) {
    int t = get_global_id(0);               // t = ((n * Sp/16 + panel) * D + e)
    if (t >= N * (Sp / TC) * D) return;
    int e = t % D;
    int panel = (t / D) % (Sp / TC);
    int n = t / (D * (Sp / TC));
    __global float *dst = xt + (long)t * TC;
    for (int c = 0; c < TC; c++) {
        int s = panel * TC + c;
        dst[c] = s < S ? x[((long)n * S + s) * D + e] : 0.0f;
    }
}

__kernel void flash_attention_pack_rows(__global const float *x,
                                        __global float *xr, const int N,
                                        const int S, const int D,
                                        const int Sp, const int DP) {
    int t = get_global_id(0);               // t = n * Sp + s: one row each
    if (t >= N * Sp) return;
    int s = t % Sp;
    int n = t / Sp;
    __global const float *src = x + ((long)n * S + s) * D;
    __global float *dst = xr + (long)t * DP;
    for (int e = 0; e < DP; e++) dst[e] = s < S && e < D ? src[e] : 0.0f;
}

// ---------------------------------------------------------------------------
// Forward. Global size (BH * ceil(Sq / (6 rt)),): work-item = (query head,
// 6 rt rows), rt <= RT (1 for short sequences: more, smaller work-items).
//   kt (BHKV, Sp/16, D, 16)   vr (BHKV, Sp, DVP)   o (BH, Sq, DV)
//   lse2 (BH, Sq): base-2 logsumexp of the row's scaled scores (-inf if none)
// c = log2(e) / sqrt(D).
// ---------------------------------------------------------------------------
__kernel void flash_attention_forward(__global const float *q,
                                      __global const float *kt,
                                      __global const float *vr,
                                      __global float *o, __global float *lse2,
                                      const int BH, const int rep,
                                      const int Sq, const int Sk,
                                      const int Sp, const int D, const int DV,
                                      const int DVP, const float c,
                                      const int causal, const int rt,
                                      const int window) {
    int t = get_global_id(0);
    int tiles = (Sq + rt * TR - 1) / (rt * TR);
    if (t >= BH * tiles) return;
    int bh = t / tiles;
    int i0 = (t - bh * tiles) * TR * rt;    // first of this work-item's rows
    int kvh = bh / rep;                     // GQA: the shared kv head
    __global const float *ktp = kt + (long)kvh * Sp * D;
    __global const float *vp = vr + (long)kvh * Sp * DVP;

    __private float a[RT * TR * DMAX] ALIGNED;   // q rows, times c
    __private float acc[RT * TR * DMAX] ALIGNED; // unnormalised output rows
    __private float s[RT * TR * BK] ALIGNED;     // one block of scores, then P
    float m[RT * TR], l[RT * TR];
    for (int tt = 0; tt < rt; tt++)
        load_rows(a + tt * TR * DMAX, q + (long)bh * Sq * D, i0 + tt * TR, Sq, D,
                  c);
    for (int r = 0; r < rt * TR; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
        for (int e = 0; e < DVP; e++) acc[r * DMAX + e] = 0.0f;
    }
    int last = i0 + rt * TR - 1 < Sq ? i0 + rt * TR - 1 : Sq - 1;
    int kend = visible_keys(last, Sq, Sk, causal);
    int kfull = visible_keys(i0, Sq, Sk, causal);   // every row sees these
    // window: no row sees a key before kfirst's panel; all see from klow on
    int kfirst = first_key(i0, Sq, Sk, window) / TC * TC;
    int klow = first_key(last, Sq, Sk, window);
    for (int k0 = kfirst; k0 < kend; k0 += BK) {
        int nj = kend - k0 < BK ? kend - k0 : BK;
        int npanels = (nj + TC - 1) / TC;
        for (int tt = 0; tt < rt; tt++)     // scores: (12, 64) = q (12, D) k^T
            for (int pnl = 0; pnl < npanels; pnl++)
                tile_6x16(a + tt * TR * DMAX, ktp + (long)(k0 / TC + pnl) * D * TC,
                          D, s + tt * TR * BK + pnl * TC, BK);
        if (k0 + BK > kfull || k0 < klow)   // the mask's edges: -inf outside
            for (int r = 0; r < rt * TR; r++)
                mask_row(s + r * BK, first_key(i0 + r, Sq, Sk, window) - k0,
                         visible_keys(i0 + r, Sq, Sk, causal) - k0);
        // Only the first nv vectors of a row hold keys that tile_acc reads
        // (j < nj); past them every score is -inf, whose p is exactly 0,
        // so leaving them out changes no max and no sum (a short block
        // near the diagonal skips most of its exponentials).
        int nv = (nj + 7) / 8;
        for (int r = 0; r < rt * TR; r++) { // online softmax, row by row
            __private float8 *sr = (__private float8 *)(s + r * BK);
            float8 mv = sr[0];
            for (int j = 1; j < nv; j++) mv = max_nan(mv, sr[j]);
            float mb = hmax8(mv);
            // written so that a NaN score (mb) stays NaN: max(m, NaN) = NaN
            float mnew = m[r] > mb ? m[r] : mb;
            if (mnew == -INFINITY) {        // nothing seen yet: P = 0
                for (int j = 0; j < nv; j++) sr[j] = 0.0f;
                continue;
            }
            float8 sum = 0.0f;
            for (int j = 0; j < nv; j++) {
                sr[j] = exp2_poly(sr[j] - mnew);
                sum += sr[j];
            }
            float alpha = exp2(m[r] - mnew); // 0 on the first block (m = -inf)
            l[r] = l[r] * alpha + hsum8(sum);
            m[r] = mnew;
            if (alpha != 1.0f)
                for (int e = 0; e < DVP; e++) acc[r * DMAX + e] *= alpha;
        }
        for (int tt = 0; tt < rt; tt++)     // acc (12, DV) += P (12, 64) v
            tile_acc(acc + tt * TR * DMAX, s + tt * TR * BK, vp + (long)k0 * DVP,
                     nj, DVP);
    }
    __global float *orow = o + (long)bh * Sq * DV;
    for (int r = 0; r < rt * TR && i0 + r < Sq; r++) {
        // l = 0: the row sees no key (zeros); l = NaN stays NaN
        float inv = l[r] == 0.0f ? 0.0f : 1.0f / l[r];
        for (int e = 0; e < DV; e++)
            orow[(long)(i0 + r) * DV + e] = acc[r * DMAX + e] * inv;
        float lse = l[r] == 0.0f ? -INFINITY : m[r] + log2(l[r]);
        lse2[(long)bh * Sq + i0 + r] = lse;
    }
}

// ---------------------------------------------------------------------------
// Backward (FlashAttention-2): rebuild each block of P from lse2, never S x S.
//   P = 2^(s2 - lse2)   dP = dO v^T   dS = P * (dP - Drow)   Drow = rowsum(dO*O)
//   dq = dS k / sqrt(D)   dk = dS^T q / sqrt(D)   dv = P^T dO
// Two kernels, each owning its outputs, so sums run in a fixed order (no
// atomics): _dq walks the keys for 6 query rows; _dkv walks every query row
// of every query head that shares the kv head, for 6 key rows.
// ---------------------------------------------------------------------------

// Global size (BH * ceil(Sq / 6),).
//   q (BH, Sq, D)  kt (BHKV, Skp/16, D, 16)  kr (BHKV, Skp, DP)
//   vt (BHKV, Skp/16, DV, 16)  o, dout (BH, Sq, DV)  lse2 (BH, Sq)
//   dq (BH, Sq, D)  drow (BH, Sq): written here, read by _dkv
__kernel void flash_attention_backward_dq(
        __global const float *q, __global const float *kt,
        __global const float *kr, __global const float *vt,
        __global const float *o, __global const float *dout,
        __global const float *lse2, __global float *dq, __global float *drow,
        const int BH, const int rep, const int Sq, const int Sk, const int Skp,
        const int D, const int DP, const int DV, const float c,
        const float inv_sqrt_d, const int causal, const int window) {
    int t = get_global_id(0);
    int tiles = (Sq + TR - 1) / TR;
    if (t >= BH * tiles) return;
    int bh = t / tiles;
    int i0 = (t - bh * tiles) * TR;
    int kvh = bh / rep;                     // GQA: the shared kv head
    __global const float *ktp = kt + (long)kvh * Skp * D;
    __global const float *vtp = vt + (long)kvh * Skp * DV;
    __global const float *krp = kr + (long)kvh * Skp * DP;

    __private float a[TR * DMAX] ALIGNED;        // q rows, times c
    __private float g[TR * DMAX] ALIGNED;        // dO rows
    __private float acc[TR * DMAX] ALIGNED;      // dq rows (before 1/sqrt(D))
    __private float s[TR * BK] ALIGNED;          // scores -> P -> dS
    __private float dp[TR * BK] ALIGNED;
    float lse[TR], dr[TR];
    load_rows(a, q + (long)bh * Sq * D, i0, Sq, D, c);
    load_rows(g, dout + (long)bh * Sq * DV, i0, Sq, DV, 1.0f);
    for (int r = 0; r < TR; r++) {
        int i = i0 + r;
        float sum = 0.0f;                   // Drow = rowsum(dO * O)
        for (int e = 0; e < DV && i < Sq; e++)
            sum += g[r * DMAX + e] * o[((long)bh * Sq + i) * DV + e];
        dr[r] = sum;
        if (i < Sq) drow[(long)bh * Sq + i] = sum;
        float x = i < Sq ? lse2[(long)bh * Sq + i] : -INFINITY;
        lse[r] = x == -INFINITY ? INFINITY : x;   // sees nothing: P = 0
        for (int e = 0; e < DP; e++) acc[r * DMAX + e] = 0.0f;
    }
    int last = i0 + TR - 1 < Sq ? i0 + TR - 1 : Sq - 1;
    int kend = visible_keys(last, Sq, Sk, causal);
    int kfull = visible_keys(i0, Sq, Sk, causal);
    int kfirst = first_key(i0, Sq, Sk, window) / TC * TC;   // as the forward
    int klow = first_key(last, Sq, Sk, window);
    for (int k0 = kfirst; k0 < kend; k0 += BK) {
        int nj = kend - k0 < BK ? kend - k0 : BK;
        int npanels = (nj + TC - 1) / TC;
        for (int pnl = 0; pnl < npanels; pnl++) {
            long panel = k0 / TC + pnl;
            tile_6x16(a, ktp + panel * D * TC, D, s + pnl * TC, BK);
            tile_6x16(g, vtp + panel * DV * TC, DV, dp + pnl * TC, BK);
        }
        if (k0 + BK > kfull || k0 < klow)
            for (int r = 0; r < TR; r++)
                mask_row(s + r * BK, first_key(i0 + r, Sq, Sk, window) - k0,
                         visible_keys(i0 + r, Sq, Sk, causal) - k0);
        int nv = (nj + 7) / 8;              // as in the forward: j < nj only
        for (int r = 0; r < TR; r++) {
            __private float8 *sr = (__private float8 *)(s + r * BK);
            __private float8 *dpr = (__private float8 *)(dp + r * BK);
            for (int j = 0; j < nv; j++) {
                float8 p = exp2_poly(sr[j] - lse[r]);
                sr[j] = p * (dpr[j] - dr[r]);  // dS
            }
        }
        tile_acc(acc, s, krp + (long)k0 * DP, nj, DP);
    }
    __global float *dqr = dq + (long)bh * Sq * D;
    for (int r = 0; r < TR && i0 + r < Sq; r++)
        for (int e = 0; e < D; e++)
            dqr[(long)(i0 + r) * D + e] = acc[r * DMAX + e] * inv_sqrt_d;
}

// Global size (BHKV * ceil(Sk / 6),): work-item = (kv head, 6 key rows).
//   k (BHKV, Sk, D)  v (BHKV, Sk, DV)  qt (BH, Sqp/16, D, 16)  qr (BH, Sqp, DP)
//   gt (BH, Sqp/16, DV, 16)  gr (BH, Sqp, DVP): dO as panels and rows
//   lse2, drow (BH, Sq)   dk (BHKV, Sk, D)   dv (BHKV, Sk, DV)
__kernel void flash_attention_backward_dkv(
        __global const float *k, __global const float *v,
        __global const float *qt, __global const float *qr,
        __global const float *gt, __global const float *gr,
        __global const float *lse2, __global const float *drow,
        __global float *dk, __global float *dv,
        const int BHKV, const int rep, const int Sq, const int Sk,
        const int Sqp, const int D, const int DP, const int DV, const int DVP,
        const float c, const float inv_sqrt_d, const int causal,
        const int window) {
    int t = get_global_id(0);
    int tiles = (Sk + TR - 1) / TR;
    if (t >= BHKV * tiles) return;
    int kvh = t / tiles;
    int j0 = (t - kvh * tiles) * TR;        // first key row of this tile
    int off = Sk - Sq;                      // query i sees key j iff j <= i + off

    __private float a[TR * DMAX] ALIGNED;        // k rows, times c
    __private float g[TR * DMAX] ALIGNED;        // v rows
    __private float dka[TR * DMAX] ALIGNED, dva[TR * DMAX] ALIGNED;
    __private float s[TR * BK] ALIGNED;          // scores^T -> P^T -> dS^T
    __private float dp[TR * BK] ALIGNED;
    __private float pcopy[TR * BK] ALIGNED;
    __private float lcol[BK] ALIGNED, dcol[BK] ALIGNED;
    load_rows(a, k + (long)kvh * Sk * D, j0, Sk, D, c);
    load_rows(g, v + (long)kvh * Sk * DV, j0, Sk, DV, 1.0f);
    for (int r = 0; r < TR; r++) {          // the columns tile_acc adds into
        for (int e = 0; e < DP; e++) dka[r * DMAX + e] = 0.0f;
        for (int e = 0; e < DVP; e++) dva[r * DMAX + e] = 0.0f;
    }
    int jlast = j0 + TR - 1 < Sk ? j0 + TR - 1 : Sk - 1;
    // the first query that sees key j0, on a panel boundary
    int istart = causal ? j0 - off : 0;
    istart = istart < 0 ? 0 : (istart / TC) * TC;
    int ifull = causal ? jlast - off : 0;   // from here on every row is seen
    // window: query i sees key j iff i + off - W < j, so no query from iend
    // on sees any of the 6 keys, and from iwin on some miss key j0
    int iend = window > 0 ? jlast - off + window : Sq;
    iend = iend < Sq ? iend : Sq;
    int iwin = window > 0 ? j0 - off + window : Sq + BK;
    for (int h = 0; h < rep; h++) {         // GQA: the query heads sharing kvh
        int bh = kvh * rep + h;
        __global const float *qtp = qt + (long)bh * Sqp * D;
        __global const float *gtp = gt + (long)bh * Sqp * DV;
        for (int q0 = istart; q0 < iend; q0 += BK) {
            int ni = iend - q0 < BK ? iend - q0 : BK;
            int npanels = (ni + TC - 1) / TC;
            for (int pnl = 0; pnl < npanels; pnl++) {
                long panel = q0 / TC + pnl;
                tile_6x16(a, qtp + panel * D * TC, D, s + pnl * TC, BK);
                tile_6x16(g, gtp + panel * DV * TC, DV, dp + pnl * TC, BK);
            }
            for (int j = 0; j < BK; j++) {  // per query column: lse2, Drow
                float x = j < ni ? lse2[(long)bh * Sq + q0 + j] : -INFINITY;
                lcol[j] = x == -INFINITY ? INFINITY : x;
                dcol[j] = j < ni ? drow[(long)bh * Sq + q0 + j] : 0.0f;
            }
            if (q0 < ifull || j0 + TR > Sk || q0 + BK > iwin) {  // the edges
                for (int r = 0; r < TR; r++)
                    for (int j = 0; j < BK; j++)
                        if (j0 + r >= Sk || (causal && j0 + r > q0 + j + off) ||
                                (window > 0 && j0 + r <= q0 + j + off - window))
                            s[r * BK + j] = -INFINITY;
            }
            __private const float8 *lc = (__private const float8 *)lcol;
            __private const float8 *dc = (__private const float8 *)dcol;
            int nv = (ni + 7) / 8;          // tile_acc reads j < ni only
            for (int r = 0; r < TR; r++) {
                __private float8 *sr = (__private float8 *)(s + r * BK);
                __private float8 *dpr = (__private float8 *)(dp + r * BK);
                __private float8 *pr = (__private float8 *)(pcopy + r * BK);
                for (int j = 0; j < nv; j++) {
                    float8 p = exp2_poly(sr[j] - lc[j]);
                    pr[j] = p;
                    sr[j] = p * (dpr[j] - dc[j]);  // dS^T
                }
            }
            __global const float *qrp = qr + ((long)bh * Sqp + q0) * DP;
            __global const float *grp = gr + ((long)bh * Sqp + q0) * DVP;
            tile_acc(dva, pcopy, grp, ni, DVP);
            tile_acc(dka, s, qrp, ni, DP);
        }
    }
    for (int r = 0; r < TR && j0 + r < Sk; r++) {
        long row = (long)kvh * Sk + j0 + r;
        for (int e = 0; e < D; e++)
            dk[row * D + e] = dka[r * DMAX + e] * inv_sqrt_d;
        for (int e = 0; e < DV; e++) dv[row * DV + e] = dva[r * DMAX + e];
    }
}
