/* The MX / BFP vector kernel (kernels/mxbfp.h), written once over a small vector layer that
 * kernels/mxbfp_avx2.c, mxbfp_avx512.c and mxbfp_neon.c each define before including this:
 *   MV_W lanes; mvf (float32 lanes), mvi (uint32 lanes), mvm (a lane mask); loads and stores
 *   (mv_ldpart / mv_stpart: the first k < MV_W lanes only), bit casts, integer and float lane
 *   operations, compares giving masks, selects, truncation, floor and round-to-nearest-even,
 *   a broadcast horizontal max, lane swaps at distance 1, 2, ... < MV_W (MV_SWAP).
 * Every lane follows the rules of kernels/mxbfp_impl.h (the scalar kernel) exactly: IEEE
 * float operations that are exact or round the same value once, or integer operations on
 * float bits, so every build gives the scalar kernel's bits.
 *
 * Two layouts:
 *  - blocks along a middle axis ("vertical"): a block is n rows of `inner` contiguous floats.
 *    The lanes run along the rows: the block's exponent is a lane-wise max over its n rows,
 *    then the rows are quantized with per-lane parameters from L1 (a copy of the tile, so that
 *    rows whose stride is a multiple of 4 KiB do not evict each other), a vector of columns
 *    at a time: no gather, no transpose. The last few columns of a row, fewer than a vector,
 *    go through a small copy.
 *  - blocks along the last axis ("rows"): a block is its whole vectors plus one partial
 *    vector; its exponent is a horizontal max, its parameters the same in every lane.
 *
 * Each method has a fast kind, for blocks whose largest exponent field lies in a range where
 * the scales are normal powers of two built from the field directly and the block holds no
 * NaN / inf (no special cases left per element), and a general kind for the other blocks
 * (zeros, subnormals, tiny or huge values, NaN / inf), which follows the scalar formulas
 * lane by lane. The fast kinds are specialised at compile time: int8 for rounding modes 0
 * and 2, to_bfp and to_bfp_prime for mode 0 without the bfloat16 conversion (Quark's
 * defaults); the other settings take the general kinds throughout.
 * Each out-of-line function works on its own copy of the parameters (qk_mxbfp), which the
 * stores through y cannot alias, so that their constants stay in registers. */
#include <stddef.h>
#include <string.h>

#include "mxbfp.h"

#define MV_SIGN 0x80000000u
#define MV_ABS 0x7fffffffu
#define MV_EXP 0x7f800000u
#define MV_E1 0x00800000u          /* one in the exponent field */
#define MV_HALF_DOWN 0x3effffffu   /* 0.49999997f = 0.5 - 2^-25 */
#define MV_F(f) ((uint32_t)(f) << 23)   /* an exponent field in place */

/* Kinds. Fast: int8 (mode 0 in one fused rounding; mode 2), float, to_bfp, to_bfp_prime.
 * General: the same four, any rounding mode (R = -1: c->rounding), any block. */
enum { MV_I8F, MV_FLF, MV_BFPF, MV_PRIMEF, MV_I8G, MV_FLG, MV_BFPG, MV_PRIMEG };

MV_INLINE int mv_fast(int K) { return K <= MV_PRIMEF; }

/* A block's (or a lane's) parameters; what each field holds depends on the kind. */
typedef struct {
    mvf a, b, c, d, g;
    mvi e, f;
    mvm sp;
} mv_par;

MV_INLINE mvi mv_u(uint32_t v) { return mv_seti(v); }

/* Exponent fields in place; fin: field + 1, 0 for NaN / inf (the wrap of field 255); unfin:
 * back to the field, 0 when no lane was finite. */
MV_INLINE mvi mv_fld(mvf x) { return mv_and(mv_f2i(x), mv_u(MV_EXP)); }
MV_INLINE mvi mv_fin(mvf x) { return mv_and(mv_add(mv_f2i(x), mv_u(MV_E1)), mv_u(MV_EXP)); }
MV_INLINE mvi mv_unfin(mvi m) { return mv_sub(mv_maxu(m, mv_u(MV_E1)), mv_u(MV_E1)); }
MV_INLINE mvm mv_special(mvf x) { return mv_eq(mv_fld(x), mv_u(MV_EXP)); }
/* the exponent max a kind's first pass takes: plain for the fast kinds and prime */
MV_INLINE mvi mv_field(int K, mvf x)
{
    return mv_fast(K) || K == MV_PRIMEG ? mv_fld(x) : mv_fin(x);
}

/* x at bfloat16 precision, half to even, NaN kept (mxb_bfloat). */
MV_INLINE mvf mv_bfloat(mvf x)
{
    mvi u = mv_f2i(x);
    mvi r = mv_and(mv_add(u, mv_add(mv_u(0x7fffu), mv_and(mv_srli(u, 16), mv_u(1u)))),
                   mv_u(0xffff0000u));
    return mv_i2f(mv_sel(mv_gts(mv_and(u, mv_u(MV_ABS)), mv_u(MV_EXP)), u, r));
}

MV_INLINE mvf mv_load(const float *p, int tb)
{
    mvf v = mv_ldf(p);
    return tb ? mv_bfloat(v) : v;
}

/* 2^k for signed lanes -149 <= k <= 127 (subnormal below -126), as mxb_pow2. */
MV_INLINE mvi mv_pow2(mvi k)
{
    mvi normal = mv_slli(mv_add(k, mv_u(127u)), 23);
    mvi sub = mv_sllv(mv_u(1u), mv_add(k, mv_u(149u)));
    return mv_sel(mv_gts(k, mv_u((uint32_t)-127)), normal, sub);
}

/* x / 2^v as x * da * db (mxb_divisor): da = 2^min(-v, 127), db = 2^max(-v - 127, 0). */
MV_INLINE void mv_divisor(mvi v, mvf *da, mvf *db)
{
    mvi nv = mv_sub(mv_u(0u), v);
    *da = mv_i2f(mv_pow2(mv_mins(nv, mv_u(127u))));
    *db = mv_i2f(mv_pow2(mv_maxs(mv_sub(nv, mv_u(127u)), mv_u(0u))));
}

/* t rounded to an integer by rounding mode R (R < 0: the mode is c->rounding, decided per
 * vector: the general kinds), with mxb_round's sign of zero; |t| < 2^23.
 *   0: trunc(t + copysign(0.5 - 2^-25, t)) is half away from zero there (tests/c checks it
 *      for every float below 2^23);
 *   2: round to nearest even, then +0 for a nonzero t that rounds to zero;
 *   1: half up, as mxb_round computes it. */
MV_INLINE mvf mv_round(mvf t, int R)
{
    if (R == 0) {
        mvi h = mv_or(mv_and(mv_f2i(t), mv_u(MV_SIGN)), mv_u(MV_HALF_DOWN));
        return mv_trunc(mv_addf(t, mv_i2f(h)));
    }
    if (R == 2) {
        mvf r = mv_rne(t), z = mv_setf(0.0f);
        mvm clear = mv_mandnot(mv_feq(r, z), mv_feq(t, z));
        return mv_i2f(mv_sel(clear, mv_u(0u), mv_f2i(r)));
    }
    mvi tb = mv_f2i(t), sgn = mv_and(tb, mv_u(MV_SIGN));
    mvf a = mv_i2f(mv_and(tb, mv_u(MV_ABS)));
    mvf tr = mv_trunc(a), fr = mv_subf(a, tr), half = mv_setf(0.5f);
    mvm up = mv_mor(mv_fgt(fr, half), mv_mand(mv_feq(fr, half), mv_eq(sgn, mv_u(0u))));
    mvf mag = mv_self(up, mv_addf(tr, mv_setf(1.0f)), tr);
    return mv_i2f(mv_or(mv_f2i(mag), sgn));
}

MV_INLINE mvf mv_round_c(mvf t, int R, const qk_mxbfp *c)
{
    if (R >= 0) return mv_round(t, R);
    if (c->rounding == 0) return mv_round(t, 0);
    if (c->rounding == 2) return mv_round(t, 2);
    return mv_round(t, 1);
}

/* The fast kinds' ranges of a block's largest exponent field (plain: NaN / inf are 255, and
 * every range ends below it). */
MV_INLINE uint32_t mv_lo(int K, const qk_mxbfp *c)
{
    switch (K) {
    case MV_I8F: return MV_F(7);
    case MV_FLF: return MV_F(27 + c->emax);
    case MV_BFPF: return MV_F(c->mbits);
    default:   /* prime: every sub-block's scale normal, whatever its shift */
        return c->shift_max + (uint32_t)c->mbits <= 253u ? MV_F(c->shift_max + (uint32_t)c->mbits)
                                                         : MV_F(254);
    }
}
MV_INLINE uint32_t mv_hi(int K) { return K == MV_FLF ? MV_F(227) : MV_F(253); }

/* All lanes lo <= M <= hi (prime's range may be empty: lo > hi). */
MV_INLINE int mv_in_range(int K, mvi M, const qk_mxbfp *c)
{
    uint32_t lo = mv_lo(K, c);
    mvi span = mv_u(mv_hi(K) - lo);
    return lo <= mv_hi(K) && mv_all(mv_eq(mv_maxu(mv_sub(M, mv_u(lo)), span), span));
}

/* The same for one M (a broadcast block maximum's first lane). */
MV_INLINE int mv_in_range1(int K, uint32_t m, const qk_mxbfp *c)
{
    uint32_t lo = mv_lo(K, c);
    return lo <= mv_hi(K) && m - lo <= mv_hi(K) - lo;
}

/* Parameters from the block's exponent M (plain for the fast kinds, fin for the general). */
MV_INLINE void mv_params(int K, int R, mvi M, const qk_mxbfp *c, mv_par *p)
{
    switch (K) {
    case MV_I8F:
        if (R == 0) {   /* f = 2^(133 - m) = 64 / scale, in one fused rounding */
            p->a = mv_i2f(mv_sub(mv_u(MV_F(260)), M));
        } else {        /* a = 2^(127 - m) = 1 / scale */
            p->a = mv_i2f(mv_sub(mv_u(MV_F(254)), M));
        }
        p->b = mv_i2f(mv_sub(M, mv_u(MV_F(6))));   /* scale / 64 */
        return;
    case MV_FLF:   /* the type's smallest normal and largest value in x's scale */
        p->e = mv_add(M, mv_u((uint32_t)(c->emin - c->emax) << 23));
        p->f = mv_add(M, mv_u(mv_bits(c->max_norm) - MV_F(127 + c->emax)));
        p->a = mv_i2f(mv_u(MV_F(150 - c->mbits)));   /* 2^(23 - mbits) */
        return;
    case MV_BFPF:   /* v = m - 126 - mbits: da = 2^-v, scale = 2^v, max_v = scale (2^mbits - 1) */
        p->a = mv_i2f(mv_sub(mv_u(MV_F(253 + c->mbits)), M));
        p->c = mv_i2f(mv_sub(M, mv_u(MV_F(c->mbits - 1))));
        p->d = mv_mulf(p->c, mv_setf((float)((1u << c->mbits) - 1u)));
        p->g = mv_i2f(mv_xor(mv_f2i(p->d), mv_u(MV_SIGN)));
        return;
    case MV_I8G: {   /* a = 2^-v, s64 = 2^v / 64, v = m - 127 */
        mvi m = mv_unfin(M);
        mvm top = mv_eq(m, mv_u(MV_F(254))), zero = mv_eq(m, mv_u(0u));
        p->a = mv_i2f(mv_sel(top, mv_u(0x00400000u), mv_sub(mv_u(MV_F(254)), m)));
        p->b = mv_mulf(mv_i2f(mv_sel(zero, mv_u(0x00400000u), m)), mv_setf(0.015625f));
        return;
    }
    default: {   /* MV_FLG, MV_BFPG: v = m - 127 - emax (BFP: mbits - 1) */
        int off = K == MV_FLG ? c->emax : c->mbits - 1;
        mvi v = mv_sub(mv_srli(mv_unfin(M), 23), mv_u((uint32_t)(127 + off)));
        mv_divisor(v, &p->a, &p->b);
        p->c = mv_i2f(mv_pow2(v));
        if (K == MV_FLG) {
            p->d = mv_setf(c->max_norm);
        } else {   /* max_v = scale * (2^mbits - 1), exact */
            p->d = mv_mulf(p->c, mv_setf((float)((1u << c->mbits) - 1u)));
            p->g = mv_i2f(mv_xor(mv_f2i(p->d), mv_u(MV_SIGN)));
        }
        return;
    }
    }
}

/* One vector of elements (to_bfp: already at bfloat16 precision when asked). */
MV_INLINE mvf mv_apply(int K, int R, mvf x, const mv_par *p, const qk_mxbfp *c)
{
    switch (K) {
    case MV_I8F: {   /* mxb_mx_int8 without special values */
        mvf q;
        if (R == 0) {   /* trunc(x f + 0.49999997): one rounding of the scaled value */
            mvf h = mv_i2f(mv_or(mv_and(mv_f2i(x), mv_u(MV_SIGN)), mv_u(MV_HALF_DOWN)));
            q = mv_minf(mv_trunc(mv_fma(x, p->a, h)), mv_setf(127.0f));   /* |q| <= 128 */
        } else {   /* (x a) 64 in two steps, as the scalar form (the sign of an underflow) */
            q = mv_round_c(mv_mulf(mv_mulf(x, p->a), mv_setf(64.0f)), R, c);
            q = mv_maxf(mv_minf(q, mv_setf(127.0f)), mv_setf(-128.0f));
        }
        return mv_mulf(q, p->b);
    }
    case MV_FLF: {   /* mxb_mx_float_fast: r = (x + g K) - g K, g = +-max(2^e, F) */
        mvi sg = mv_and(mv_f2i(x), mv_u(MV_SIGN));
        mvf g = mv_i2f(mv_or(mv_maxu(mv_fld(x), p->e), sg));
        mvf r = mv_fnma(g, p->a, mv_fma(g, p->a, x));
        /* r has x's sign or is +0: the smaller of it and +-maxs as bits is the smaller
         * magnitude */
        return mv_i2f(mv_minu(mv_f2i(r), mv_or(p->f, sg)));
    }
    case MV_BFPF: {   /* mxb_bfp with db = 1 and no special values */
        mvf q = mv_mulf(mv_round_c(mv_mulf(x, p->a), R, c), p->c);
        return mv_maxf(mv_minf(q, p->d), p->g);
    }
    case MV_I8G: {   /* mxb_mx_int8 */
        mvf q = mv_round_c(mv_mulf(mv_mulf(x, p->a), mv_setf(64.0f)), R, c);
        q = mv_maxf(mv_minf(q, mv_setf(127.0f)), mv_setf(-128.0f));
        return mv_self(mv_special(x), x, mv_mulf(q, p->b));
    }
    case MV_FLG: {   /* mxb_mx_float */
        mvi u = mv_f2i(mv_mulf(mv_mulf(x, p->a), p->b));
        mvi sgn = mv_and(u, mv_u(MV_SIGN)), au = mv_and(u, mv_u(MV_ABS));
        mvi ex = mv_maxs(mv_srli(au, 23), mv_u((uint32_t)(c->emin + 127)));
        mvf magic = mv_i2f(mv_slli(mv_add(ex, mv_u((uint32_t)(23 - c->mbits))), 23));
        mvf r = mv_minf(mv_subf(mv_addf(mv_i2f(au), magic), magic), p->d);
        mvi rb = mv_f2i(r);
        rb = mv_sel(mv_eq(rb, mv_u(0u)), rb, mv_or(rb, sgn));
        return mv_self(mv_special(x), x, mv_mulf(p->c, mv_i2f(rb)));
    }
    default: {   /* MV_BFPG: mxb_bfp */
        mvf q = mv_mulf(mv_round_c(mv_mulf(mv_mulf(x, p->a), p->b), R, c), p->c);
        q = mv_maxf(mv_minf(q, p->d), p->g);
        return mv_self(mv_special(x), x, q);
    }
    }
}

/* to_bfp_prime: the parameters of a sub-block from the block's exponent M and the
 * sub-block's ms (plain fields), as mxb_prime_block computes them. */
MV_INLINE void mv_prime_params(int K, mvi M, mvi ms, const qk_mxbfp *c, mv_par *p)
{
    /* the shift in the field (a difference of fields is at most 254) */
    mvi shift = mv_minu(mv_sub(M, ms), mv_u(MV_F(c->shift_max < 255u ? c->shift_max : 255u)));
    if (K == MV_PRIMEF) {   /* q = 2^(m - shift + 1 - mbits) (the quantum), da = 1 / q */
        mvi q = mv_sub(mv_sub(M, shift), mv_u(MV_F(c->mbits - 1)));
        p->b = mv_i2f(q);
        p->a = mv_i2f(mv_sub(mv_u(MV_F(254)), q));
        return;
    }
    mvi mi = mv_srli(M, 23);
    shift = mv_srli(shift, 23);
    /* kexp = m - 127 - shift + 1 - mbits; p = 2^kexp, or 0 below 2^-149 */
    mvi kexp = mv_sub(mi, mv_add(shift, mv_u((uint32_t)(126 + c->mbits))));
    mvi pk = mv_pow2(mv_maxs(kexp, mv_u((uint32_t)-149)));
    p->a = mv_i2f(mv_sel(mv_gts(kexp, mv_u((uint32_t)-150)), pk, mv_u(0u)));
    p->e = mv_sub(mv_add(mi, mv_u((uint32_t)(24 - c->mbits))), shift);   /* nb + e */
    p->sp = mv_eq(M, mv_u(MV_EXP));   /* NaN / inf in the block: 0x7FFFFFFF throughout */
}

/* One vector of a to_bfp_prime sub-block (x already converted to bfloat16 if asked). */
MV_INLINE mvf mv_prime_apply(int K, int R, mvf x, const mv_par *p, const qk_mxbfp *c)
{
    mvi u = mv_f2i(x), one = mv_u(1u);
    mvi sgn = mv_and(u, mv_u(MV_SIGN));
    if (K == MV_PRIMEF) {
        /* |x| / q rounded (the scalar form's integer rounding of the mantissa shifted by nb
         * is this value rounded: |x| / q = man 2^-nb, exact), at most 2^mbits - 1, times q;
         * subnormals flushed to zero; the sign put back */
        mvi a = mv_sel(mv_eq(mv_and(u, mv_u(MV_EXP)), mv_u(0u)), mv_u(0u), mv_and(u, mv_u(MV_ABS)));
        mvf t = mv_mulf(mv_i2f(a), p->a);
        mvf r;
        if (R == 0) r = mv_trunc(mv_addf(t, mv_i2f(mv_u(MV_HALF_DOWN))));
        else r = mv_rne(t);   /* mode 2: ties to the even integer */
        r = mv_minf(r, mv_setf((float)((1u << c->mbits) - 1u)));
        return mv_i2f(mv_or(mv_f2i(mv_mulf(r, p->b)), sgn));
    }
    int mode = c->rounding;
    mvi e = mv_srli(mv_and(u, mv_u(MV_EXP)), 23);
    mvi man = mv_sel(mv_eq(e, mv_u(0u)), mv_u(0u), mv_or(mv_and(u, mv_u(0x7fffffu)),
                                                         mv_u(0x800000u)));
    mvi nb = mv_minu(mv_sub(p->e, e), mv_u(31u));   /* >= 1 */
    mvi ret = mv_srlv(man, nb);
    mvi tail = mv_and(man, mv_sub(mv_sllv(one, nb), one));
    mvi half = mv_sllv(one, mv_sub(nb, one));
    mvm tie = mode == 0 ? mv_eq(one, one)
              : mode == 1 ? mv_eq(sgn, mv_u(0u)) : mv_eq(mv_and(ret, one), one);
    mvm up = mv_mandnot(mv_mor(mv_gts(tail, half), mv_mand(mv_eq(tail, half), tie)),
                        mv_eq(ret, mv_u((1u << c->mbits) - 1u)));
    mvi q = mv_sel(up, mv_add(ret, one), ret);
    mvi v = mv_or(mv_f2i(mv_mulf(mv_cvtf(q), p->a)), sgn);
    (void)R;
    return mv_i2f(mv_sel(p->sp, mv_u(0x7fffffffu), v));
}

/* The general kinds' element step, out of line (one copy of each, the rounding mode read
 * from c): they serve the rare blocks and the settings without a fast kind. */
#define MV_GAPPLY(K)                                                                     \
    static mvf mv_gapply_##K(mvf x, const mv_par *p, const qk_mxbfp *c)                   \
    {                                                                                    \
        return MV_##K == MV_PRIMEG ? mv_prime_apply(MV_##K, -1, x, p, c)                 \
                                   : mv_apply(MV_##K, -1, x, p, c);                      \
    }
MV_GAPPLY(I8G)
MV_GAPPLY(FLG)
MV_GAPPLY(BFPG)
MV_GAPPLY(PRIMEG)

/* One vector of kind K: inline for the fast kinds, a call for the general ones. */
MV_INLINE mvf mv_step(int K, int R, mvf x, const mv_par *p, const qk_mxbfp *c)
{
    switch (K) {
    case MV_I8G: return mv_gapply_I8G(x, p, c);
    case MV_FLG: return mv_gapply_FLG(x, p, c);
    case MV_BFPG: return mv_gapply_BFPG(x, p, c);
    case MV_PRIMEG: return mv_gapply_PRIMEG(x, p, c);
    case MV_PRIMEF: return mv_prime_apply(K, R, x, p, c);
    default: return mv_apply(K, R, x, p, c);
    }
}

/* Lane-wise max over each aligned group of ks lanes (a power of two). */
MV_INLINE mvi mv_segmax(mvi v, size_t ks)
{
    for (size_t s = 1; s < ks && s < MV_W; s <<= 1) v = mv_maxu(v, MV_SWAP(v, s));
    return v;
}

/* ------------------------------------------------------------------ vertical blocks */

/* Rows of a tile kept in a copy (more: the second pass reads x again). */
#define MV_STASH 64

/* Whether a tile of n rows at this stride keeps a copy for its second pass: when the rows'
 * cache lines fall into so few L1 sets (a stride of a multiple of 4 KiB, 3 KiB, ...) that
 * the rows of x and y would evict each other. */
static int mv_keep(size_t inner, size_t n)
{
    size_t bytes = inner * sizeof(float), sets = 64, step;
    if (n > MV_STASH) return 0;
    if (bytes % 64 == 0) {   /* every row starts at the same offset in its line */
        step = bytes / 64 % 64;
        for (sets = 64; step && step % 2 == 0 && sets > 1; step /= 2) sets /= 2;
        if (!step) sets = 1;
    }
    return sets * 4 < n;
}

/* A row's vector of a tile: k == MV_W whole, else its first k lanes (the others read as
 * 1.0, a value inside every fast range: they are blocks of their own and never stored). */
MV_INLINE mvf mv_tload(const float *p, size_t k, int tb)
{
    mvf v = k == MV_W ? mv_ldf(p) : mv_self(mv_firstm(k), mv_ldpart(p, k), mv_setf(1.0f));
    return tb ? mv_bfloat(v) : v;
}

MV_INLINE void mv_tstore(float *p, mvf v, size_t k)
{
    if (k == MV_W) mv_stf(p, v);
    else mv_stpart(p, v, k);
}

/* One tile: n rows of one vector (its first k lanes) at x, row stride st. A fast kind
 * returns 0, writing nothing, when some lane's block is outside its range. */
MV_INLINE int mv_tile(int K, int R, const float *x, float *y, size_t n, size_t st, size_t k,
                      int keep, const qk_mxbfp *c)
{
    int tb = !mv_fast(K) && c->to_bfloat;   /* to_bfp: x at bfloat16 precision throughout */
    mvf stash[MV_STASH];
    mvi M = mv_u(0u), M2 = mv_u(0u);   /* two chains over alternate rows */
    mv_par p;
    size_t r = 0;
    keep = keep && mv_fast(K);
    for (; r + 2 <= n; r += 2) {
        mvf v0 = mv_tload(x + r * st, k, tb), v1 = mv_tload(x + (r + 1) * st, k, tb);
        if (keep) stash[r] = v0, stash[r + 1] = v1;
        M = mv_maxu(M, mv_field(K, v0));
        M2 = mv_maxu(M2, mv_field(K, v1));
    }
    if (r < n) {
        mvf v0 = mv_tload(x + r * st, k, tb);
        if (keep) stash[r] = v0;
        M = mv_maxu(M, mv_field(K, v0));
    }
    M = mv_maxu(M, M2);
    if (mv_fast(K) && !mv_in_range(K, M, c)) return 0;
#define MV_ROW(r) (keep ? stash[r] : mv_tload(x + (r) * st, k, tb))
    if (K == MV_PRIMEF || K == MV_PRIMEG) {
        size_t ks = c->sub_block;
        for (size_t j = 0; j < n; j += ks) {
            size_t kk = n - j < ks ? n - j : ks;
            mvi ms = mv_u(0u);
            for (r = j; r < j + kk; r++) ms = mv_maxu(ms, mv_fld(MV_ROW(r)));
            mv_prime_params(K, M, ms, c, &p);
            for (r = j; r < j + kk; r++) mv_tstore(y + r * st, mv_step(K, R, MV_ROW(r), &p, c), k);
        }
        return 1;
    }
    mv_params(K, R, M, c, &p);
    for (r = 0; r + 2 <= n; r += 2) {
        mvf v0 = MV_ROW(r), v1 = MV_ROW(r + 1);
        mv_tstore(y + r * st, mv_step(K, R, v0, &p, c), k);
        mv_tstore(y + (r + 1) * st, mv_step(K, R, v1, &p, c), k);
    }
    if (r < n) mv_tstore(y + r * st, mv_step(K, R, MV_ROW(r), &p, c), k);
#undef MV_ROW
    return 1;
}

/* The general kinds' tiles, out of line (any k). */
typedef void (*mv_tile_fn)(const float *x, float *y, size_t n, size_t st, size_t k,
                           const qk_mxbfp *c);
#define MV_TILE_G(K)                                                                     \
    static void mv_tile_##K(const float *x, float *y, size_t n, size_t st, size_t k,      \
                            const qk_mxbfp *cp)                                          \
    {                                                                                    \
        qk_mxbfp cc = *cp;                                                               \
        mv_tile(MV_##K, -1, x, y, n, st, k, 0, &cc);                                     \
    }
MV_TILE_G(I8G)
MV_TILE_G(FLG)
MV_TILE_G(BFPG)
MV_TILE_G(PRIMEG)

/* Blocks of more rows than this along a middle axis go through the scalar kernel (their
 * tiles would not stay in L1). */
#define MV_MAX_ROWS 4096

/* outer slabs of len rows of `inner` columns, blocks of c->block rows: kind K inline (tiles
 * of whole vectors, then the last inner % MV_W columns), `slow` (general) for the tiles it
 * declines. */
MV_INLINE void mv_vert(int K, int R, mv_tile_fn slow, const float *x, float *y, size_t outer,
                       size_t len, size_t inner, const qk_mxbfp *cp)
{
    qk_mxbfp cc = *cp;
    const qk_mxbfp *c = &cc;
    size_t bs = c->block, full = inner - inner % MV_W, k = inner % MV_W;
    int keep = mv_keep(inner, bs < len ? bs : len);
    for (size_t o = 0; o < outer; o++, x += len * inner, y += len * inner)
        for (size_t r = 0; r < len; r += bs) {
            size_t n = len - r < bs ? len - r : bs;
            const float *xb = x + r * inner;
            float *yb = y + r * inner;
            if (n > MV_MAX_ROWS) {
                qk_mxbfp_scalar_cols(xb, yb, n, inner, 0, cp);
                continue;
            }
            for (size_t col = 0; col < inner; col += MV_W) {
                size_t w = col < full ? MV_W : k;   /* the last tile: k columns */
                if (!mv_tile(K, R, xb + col, yb + col, n, inner, w, keep && w == MV_W, c))
                    slow(xb + col, yb + col, n, inner, w, cp);
            }
        }
}

/* ------------------------------------------------------------------ blocks along rows */

/* One block of n contiguous elements; `end` is where this call's data ends. A fast kind
 * returns 0, writing nothing, when the block is outside its range. */
MV_INLINE int mv_rblock(int K, int R, const float *x, float *y, size_t n, const float *end,
                        const qk_mxbfp *c)
{
    size_t nv = n / MV_W, k = n % MV_W, j;
    int tb = !mv_fast(K) && c->to_bfloat, direct = 1;
    mvi M = mv_u(0u);
    mvf part = mv_setf(0.0f), pin = part;
    for (j = 0; j < nv; j++) M = mv_maxu(M, mv_field(K, mv_load(x + j * MV_W, tb)));
    if (k) {
        /* a whole vector where it stays inside this call's data (its other lanes are written
         * back as they were), else only the k lanes */
        direct = end - (x + nv * MV_W) >= (ptrdiff_t)MV_W;
        part = direct ? mv_ldf(x + nv * MV_W) : mv_ldpart(x + nv * MV_W, k);
        pin = tb ? mv_bfloat(part) : part;
        M = mv_maxu(M, mv_first(mv_field(K, pin), k));
    }
    mvi B = mv_hmaxu(M);
    if (mv_fast(K) && !mv_in_range1(K, mv_lane0(B), c)) return 0;
    mv_par p;
    mvf r;
    if (K == MV_PRIMEF || K == MV_PRIMEG) {
        size_t ks = c->sub_block;
        if (ks < MV_W) {   /* sub-blocks inside vectors */
            for (j = 0; j < nv; j++) {
                mvf v = mv_load(x + j * MV_W, tb);
                mv_prime_params(K, B, mv_segmax(mv_fld(v), ks), c, &p);
                mv_stf(y + j * MV_W, mv_step(K, R, v, &p, c));
            }
            if (k) mv_prime_params(K, B, mv_segmax(mv_first(mv_fld(pin), k), ks), c, &p);
        } else {   /* sub-blocks of g = ks / MV_W vectors (mv_prime_rows_ok) */
            size_t g = ks / MV_W;
            for (j = 0; j < nv; j += g) {
                size_t e = j + g < nv ? j + g : nv, i;
                mvi ms = mv_u(0u);
                for (i = j; i < e; i++) ms = mv_maxu(ms, mv_fld(mv_load(x + i * MV_W, tb)));
                if (k && nv < j + g) ms = mv_maxu(ms, mv_first(mv_fld(pin), k));
                mv_prime_params(K, B, mv_hmaxu(ms), c, &p);
                for (i = j; i < e; i++)
                    mv_stf(y + i * MV_W, mv_step(K, R, mv_load(x + i * MV_W, tb), &p, c));
            }
            if (k && nv % g == 0)
                mv_prime_params(K, B, mv_hmaxu(mv_first(mv_fld(pin), k)), c, &p);
        }
        if (!k) return 1;
        r = mv_step(K, R, pin, &p, c);
    } else {
        mv_params(K, R, B, c, &p);
        for (j = 0; j < nv; j++)
            mv_stf(y + j * MV_W, mv_step(K, R, mv_load(x + j * MV_W, tb), &p, c));
        if (!k) return 1;
        r = mv_step(K, R, pin, &p, c);
    }
    if (direct) mv_stf(y + nv * MV_W, mv_self(mv_firstm(k), r, part));
    else mv_stpart(y + nv * MV_W, r, k);
    return 1;
}

/* The general kinds' blocks, out of line: the blocks the fast kinds decline. */
typedef void (*mv_rblock_fn)(const float *x, float *y, size_t n, const float *end,
                             const qk_mxbfp *c);
#define MV_RBLOCK_G(K)                                                                   \
    static void mv_rblock_##K(const float *x, float *y, size_t n, const float *end,       \
                              const qk_mxbfp *cp)                                        \
    {                                                                                    \
        qk_mxbfp cc = *cp;                                                               \
        mv_rblock(MV_##K, -1, x, y, n, end, &cc);                                        \
    }
MV_RBLOCK_G(I8G)
MV_RBLOCK_G(FLG)
MV_RBLOCK_G(BFPG)
MV_RBLOCK_G(PRIMEG)

/* `count` blocks of n <= MV_W elements at x + i st, i < count, in memory order (nothing past
 * `end` is touched), MV_W at a time: loaded as MV_W rows of one vector (the lanes past a
 * block's end masked out), their maxima from one reduction (mv_reduce), then each quantized
 * and stored with its lanes past the end written back as they were loaded. Those lanes reach
 * only blocks stored later (the callers keep that order), which leaves every element right;
 * in place they are unchanged. Fast kinds; `slow` (general) takes what they decline and the
 * last count % MV_W blocks. */
MV_INLINE void mv_family(int K, int R, mv_rblock_fn slow, const float *x, float *y,
                         size_t count, size_t st, size_t n, const float *end, const qk_mxbfp *cp)
{
    qk_mxbfp cc = *cp;
    const qk_mxbfp *c = &cc;
    mvi em = mv_emask(n);
    mvm fm = mv_firstm(n);
    size_t i = 0;
    for (; i + MV_W <= count && end - (x + i * st) >= (ptrdiff_t)((MV_W - 1) * st + MV_W);
         i += MV_W) {
        const float *xg = x + i * st;
        float *yg = y + i * st;
        mvf v[MV_W];
        mvi f[MV_W];
        uint32_t mx[MV_W];
        mv_par p;
        MV_UNROLL
        for (int j = 0; j < MV_W; j++) {
            v[j] = mv_ldf(xg + j * st);
            f[j] = mv_and(mv_f2i(v[j]), em);
        }
        mvi all = mv_reduce(f);
        if (!mv_in_range(K, all, c)) {
            for (int j = 0; j < MV_W; j++) slow(xg + j * st, yg + j * st, n, end, cp);
            continue;
        }
        mv_sti(mx, all);
        MV_UNROLL
        for (int j = 0; j < MV_W; j++) {
            mvi M = mv_u(mx[j]);
            if (K == MV_PRIMEF) mv_prime_params(K, M, mv_segmax(mv_and(mv_f2i(v[j]), em), c->sub_block), c, &p);
            else mv_params(K, R, M, c, &p);
            mv_stf(yg + j * st, mv_self(fm, mv_step(K, R, v[j], &p, c), v[j]));
        }
    }
    for (; i < count; i++) slow(x + i * st, y + i * st, n, end, cp);
}

typedef void (*mv_family_fn)(const float *x, float *y, size_t count, size_t st, size_t n,
                             const float *end, const qk_mxbfp *c);

/* outer rows of len elements, blocks of c->block from each row's start: kind K inline,
 * `slow` for the blocks it declines. Blocks of at most MV_W elements that follow each other
 * (or rows of blocks of MV_W and one shorter last block) go in groups (`family`), others one
 * at a time. */
MV_INLINE void mv_rows(int K, int R, mv_rblock_fn slow, mv_family_fn family, const float *x,
                       float *y, size_t outer, size_t len, const qk_mxbfp *cp)
{
    qk_mxbfp cc = *cp;
    const qk_mxbfp *c = &cc;
    const float *end = x + outer * len;
    size_t bs = c->block, most = bs < len ? bs : len, rem = len % bs;
    int aligned = K != MV_PRIMEF || c->sub_block <= MV_W;   /* prime: sub-blocks in vectors */
    if (aligned && most <= MV_W && (rem == 0 || len <= bs)) {
        /* one stream of equal blocks */
        family(x, y, outer * (len / most), most, most, end, cp);
        return;
    }
    if (aligned && bs == MV_W) {
        /* rows of whole vectors and one short block: per MV_W rows, the short blocks first
         * (their overlap reaches the next row's first block), then each column of blocks */
        size_t o = 0;
        for (; o + MV_W <= outer; o += MV_W) {
            const float *xo = x + o * len;
            float *yo = y + o * len;
            family(xo + len - rem, yo + len - rem, MV_W, len, rem, end, cp);
            for (size_t r = 0; r + bs <= len; r += bs) family(xo + r, yo + r, MV_W, len, bs, end, cp);
        }
        x += o * len, y += o * len, outer -= o;
    }
    for (size_t o = 0; o < outer; o++, x += len, y += len)
        for (size_t r = 0; r < len; r += bs) {
            size_t n = len - r < bs ? len - r : bs;
#if defined(MV_ROWS128)
            /* the layer's own form for four blocks of 32 at a time */
            if (bs == 32 && (K == MV_FLF || (K == MV_I8F && R == 0)) && len - r >= 128 &&
                MV_ROWS128(x + r, y + r, K == MV_I8F, cp)) {
                r += 96;
                continue;
            }
#endif
            if (!mv_rblock(K, R, x + r, y + r, n, end, c)) slow(x + r, y + r, n, end, cp);
        }
}

/* ------------------------------------------------------------------ entry points */

/* Whether the rows form handles this to_bfp_prime layout (sub-blocks aligned in vectors). */
static int mv_prime_rows_ok(const qk_mxbfp *c)
{
    size_t ks = c->sub_block;
    if (ks & (ks - 1)) return 0;   /* a power of two: aligned groups of lanes */
    return ks < MV_W || ks % MV_W == 0;
}

typedef void (*mv_run_fn)(const float *x, float *y, size_t outer, size_t len, size_t inner,
                          const qk_mxbfp *c);
#define MV_RUN(K, R, G)                                                                  \
    static void mv_family_##K##R(const float *x, float *y, size_t count, size_t st,       \
                                 size_t n, const float *end, const qk_mxbfp *c)          \
    {                                                                                    \
        mv_family(MV_##K, R, mv_rblock_##G, x, y, count, st, n, end, c);                 \
    }                                                                                    \
    static void mv_run_##K##R(const float *x, float *y, size_t outer, size_t len,         \
                              size_t inner, const qk_mxbfp *c)                           \
    {                                                                                    \
        if (inner == 1)                                                                  \
            mv_rows(MV_##K, R, mv_rblock_##G, mv_family_##K##R, x, y, outer, len, c);    \
        else                                                                             \
            mv_vert(MV_##K, R, mv_tile_##G, x, y, outer, len, inner, c);                 \
    }
MV_RUN(I8F, 0, I8G)
MV_RUN(I8F, 2, I8G)
MV_RUN(FLF, 0, FLG)
MV_RUN(BFPF, 0, BFPG)
MV_RUN(PRIMEF, 0, PRIMEG)

/* the general kinds throughout: MX int8 with rounding mode 1, to_bfp and to_bfp_prime with
 * rounding modes 1 and 2 or bfloat16 first */
static void mv_run_general(const float *x, float *y, size_t outer, size_t len, size_t inner,
                           const qk_mxbfp *c)
{
    int i8 = c->method == QK_MX_INT8, bfp = c->method == QK_BFP;
    mv_rblock_fn b = i8 ? mv_rblock_I8G : bfp ? mv_rblock_BFPG : mv_rblock_PRIMEG;
    mv_tile_fn t = i8 ? mv_tile_I8G : bfp ? mv_tile_BFPG : mv_tile_PRIMEG;
    size_t bs = c->block, full = inner - inner % MV_W;
    const float *end = x + outer * len * inner;
    for (size_t o = 0; o < outer; o++, x += len * inner, y += len * inner)
        for (size_t r = 0; r < len; r += bs) {
            size_t n = len - r < bs ? len - r : bs;
            const float *xb = x + r * inner;
            float *yb = y + r * inner;
            if (inner == 1) {
                b(xb, yb, n, end, c);
            } else if (n > MV_MAX_ROWS) {
                qk_mxbfp_scalar_cols(xb, yb, n, inner, 0, c);
            } else {
                for (size_t col = 0; col < full; col += MV_W)
                    t(xb + col, yb + col, n, inner, MV_W, c);
                if (full < inner) t(xb + full, yb + full, n, inner, inner - full, c);
            }
        }
}

void MXB_NAME(const float *x, float *y, size_t outer, size_t len, size_t inner,
              const qk_mxbfp *c)
{
    mv_run_fn run = mv_run_general;
    int m0 = c->rounding == 0 && !c->to_bfloat;
    switch (c->method) {
    case QK_MX_FLOAT: run = mv_run_FLF0; break;
    case QK_MX_INT8:
        if (c->rounding != 1) run = c->rounding == 2 ? mv_run_I8F2 : mv_run_I8F0;
        break;
    case QK_BFP:
        if (m0) run = mv_run_BFPF0;
        break;
    default:
        if (inner == 1 && !mv_prime_rows_ok(c)) {
            qk_mxbfp_scalar(x, y, outer, len, 1, c);
            return;
        }
        if (m0) run = mv_run_PRIMEF0;
        break;
    }
    run(x, y, outer, len, inner, c);
}

/* OCP MX scale codes (kernels/mxbfp.h): each block's largest finite exponent field less
 * `shift`, at least 0; codes of a slab's blocks stored (blocks, inner). */
void MXB_SCALES(const float *x, uint8_t *s, size_t len, size_t inner, size_t block, int shift)
{
    uint32_t codes[MV_W];
    mvi sh = mv_u((uint32_t)shift << 23);
    for (size_t r = 0, kb = 0; r < len; r += block, kb++) {
        size_t n = len - r < block ? len - r : block, col, i, k = 1;
        const float *xb = x + r * inner;
        uint8_t *sb = s + kb * inner;
        for (col = 0; col < inner; col += k) {
            mvi M = mv_u(0u);
            if (inner == 1) {   /* one code: a horizontal max */
                for (i = 0; i + MV_W <= n; i += MV_W) M = mv_maxu(M, mv_fin(mv_ldf(xb + i)));
                if (i < n) M = mv_maxu(M, mv_first(mv_fin(mv_ldpart(xb + i, n - i)), n - i));
                M = mv_hmaxu(M);
            } else {   /* a vector of columns (the last: k of them) */
                k = inner - col < MV_W ? inner - col : MV_W;
                for (i = 0; i < n; i++) {
                    const float *p = xb + i * inner + col;
                    M = mv_maxu(M, mv_fin(k == MV_W ? mv_ldf(p) : mv_ldpart(p, k)));
                }
            }
            /* max(field - shift, 0) */
            mv_sti(codes, mv_srli(mv_sub(mv_maxu(mv_unfin(M), sh), sh), 23));
            for (i = 0; i < k; i++) sb[col + i] = (uint8_t)codes[i];
        }
    }
}
