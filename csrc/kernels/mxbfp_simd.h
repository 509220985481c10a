/* The MX / BFP vector kernel (kernels/mxbfp.h), written once over a small vector layer that
 * kernels/mxbfp_avx2.c, mxbfp_avx512.c and mxbfp_neon.c each define before including this:
 *   MV_W lanes; mvf (float32 lanes), mvi (uint32 lanes), mvm (a lane mask); loads and stores
 *   (mv_ldpart / mv_stpart: the first k < MV_W lanes only), bit casts, integer and float lane
 *   operations, compares giving masks, selects, truncation and round to nearest even, a broadcast horizontal max, lane swaps at distance 1, 2, ... < MV_W (MV_SWAP), and
 *   mv_reduce: the maxima of MV_W vectors, one per lane.
 * Every lane follows the rules of kernels/mxbfp_impl.h (the scalar kernel) exactly, with
 * IEEE float operations that are exact or round the same value once, or integer operations
 * on float bits, so every build gives the scalar kernel's bits.
 *
 * Two layouts:
 *  - blocks along a middle axis ("vertical"): a block is n rows of `inner` contiguous floats.
 *    The lanes run along the rows: the block's exponent is a lane-wise max over its n rows,
 *    then the rows are quantized with per-lane parameters from L1 (from a copy of the tile
 *    when the row stride would make the rows of x and y evict each other), a vector of
 *    columns at a time, the last one partial: no gather, no transpose.
 *  - blocks along the last axis ("rows"): a block is its whole vectors plus one partial
 *    vector, its exponent a horizontal max; blocks of at most one vector go MV_W at a time,
 *    their exponents from one reduction.
 *
 * The vector forms cover the blocks whose largest exponent field lies in a range where the
 * scales are normal powers of two built from the field, with no NaN / inf in the block (all
 * zero blocks count as in range: every form gives their scalar results): every element
 * then follows the same few operations. The other blocks (NaN / inf, or only tiny or huge
 * values) go to the scalar kernel. Kinds: int8 with rounding mode 0 (one fused rounding),
 * int8 with modes 1 and 2, the float element types, to_bfp, to_bfp_prime (the last two with
 * the rounding mode decided per vector; a bfloat16 conversion is a pass of its own first).
 * Each out-of-line
 * function works on its own copy of the parameters (qk_mxbfp), which stores through y cannot
 * alias, so that their constants stay in registers. */
#include <stddef.h>
#include <string.h>

#include "mxbfp.h"

#define MV_SIGN 0x80000000u
#define MV_ABS 0x7fffffffu
#define MV_EXP 0x7f800000u
#define MV_HALF_DOWN 0x3effffffu   /* 0.49999997f = 0.5 - 2^-25 */
#define MV_F(f) ((uint32_t)(f) << 23)   /* an exponent field in place */

enum { MV_I8, MV_FL, MV_BFP, MV_PRIME };

/* A block's (or a lane's) parameters; what each field holds depends on the kind. */
typedef struct {
    mvf a, b, c;
    mvi e, f;
} mv_par;

MV_INLINE mvi mv_u(uint32_t v) { return mv_seti(v); }

/* x at bfloat16 precision, half to even, NaN kept (mxb_bfloat). */
MV_INLINE mvf mv_bfloat(mvf x)
{
    mvi u = mv_f2i(x);
    mvi r = mv_and(mv_add(u, mv_add(mv_u(0x7fffu), mv_and(mv_srli(u, 16), mv_u(1u)))),
                   mv_u(0xffff0000u));
    return mv_i2f(mv_sel(mv_gts(mv_and(u, mv_u(MV_ABS)), mv_u(MV_EXP)), u, r));
}


/* |x| as bits: their max over a block gives its largest exponent field (and whether all is
 * zero) */
MV_INLINE mvi mv_abs(mvf x) { return mv_and(mv_f2i(x), mv_u(MV_ABS)); }

/* The block's exponent field from the max of |x|; an all-zero block takes field 127 (inside
 * every range: the vector forms give zeros their scalar results at any scale). */
MV_INLINE mvi mv_exp_of(mvi amax)
{
    return mv_sel(mv_eq(amax, mv_u(0u)), mv_u(MV_F(127)), mv_and(amax, mv_u(MV_EXP)));
}

/* t rounded to an integer by rounding mode R (R < 0: c->rounding, per vector), with
 * mxb_round's sign of zero; |t| < 2^23.
 *   0: trunc(t + copysign(0.5 - 2^-25, t)) is half away from zero there (tests/c checks it
 *      for every float below 2^23);
 *   2: round to nearest even, then +0 for a nonzero t that rounds to zero;
 *   1: half up, with t's sign (mv_half_up on |t|). */
/* A magnitude a >= 0 rounded to an integer, halves up where sgn is 0 and down elsewhere
 * (mxb_round's mode 1; the fraction a - trunc(a) is exact). */
MV_INLINE mvf mv_half_up(mvf a, mvi sgn)
{
    mvf tr = mv_trunc(a), fr = mv_subf(a, tr), half = mv_setf(0.5f);
    mvm up = mv_mor(mv_fgt(fr, half), mv_mand(mv_feq(fr, half), mv_eq(sgn, mv_u(0u))));
    return mv_self(up, mv_addf(tr, mv_setf(1.0f)), tr);
}

MV_INLINE mvf mv_round(mvf t, int R, const qk_mxbfp *c)
{
    if (R < 0) R = c->rounding;
    if (R == 0) {
        mvi h = mv_or(mv_and(mv_f2i(t), mv_u(MV_SIGN)), mv_u(MV_HALF_DOWN));
        return mv_trunc(mv_addf(t, mv_i2f(h)));
    }
    if (R == 2) {
        mvf r = mv_rne(t), z = mv_setf(0.0f);
        mvm clear = mv_mandnot(mv_feq(r, z), mv_feq(t, z));
        return mv_i2f(mv_sel(clear, mv_u(0u), mv_f2i(r)));
    }
    mvi sgn = mv_and(mv_f2i(t), mv_u(MV_SIGN));
    mvf mag = mv_half_up(mv_i2f(mv_and(mv_f2i(t), mv_u(MV_ABS))), sgn);
    return mv_i2f(mv_or(mv_f2i(mag), sgn));
}

/* A row's line MV_PF tiles ahead, asked for while a tile reads its rows: the rows of a
 * tile are as many streams as it has rows, more than the hardware prefetchers follow.
 * (Only a hint: the address may lie past the data.) */
#define MV_PF 2
#if defined(__GNUC__) || defined(__clang__)
#define MV_PREFETCH(p) __builtin_prefetch(p)
#else
#define MV_PREFETCH(p) ((void)0)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MV_NOINLINE static __attribute__((noinline, unused))
#elif defined(_MSC_VER)
#define MV_NOINLINE static __declspec(noinline)
#else
#define MV_NOINLINE static
#endif

/* to_bfp_prime's magnitudes t rounded by modes 1 and 2 (mode 0 is inline): a call, so that
 * the compiler cannot compute every mode for each vector and select (it did) */
MV_NOINLINE mvf mv_prime_round(mvf t, mvi sgn, int mode)
{
    return mode == 2 ? mv_rne(t) : mv_half_up(t, sgn);
}

/* The ranges of a block's largest exponent field the vector forms cover. */
MV_INLINE uint32_t mv_lo(int K, const qk_mxbfp *c)
{
    switch (K) {
    case MV_I8: return MV_F(7);                /* 64 / scale and scale / 64 normal */
    case MV_FL: return MV_F(27 + c->emax);     /* mxb_mx_float_fast's range */
    case MV_BFP: return MV_F(c->mbits);        /* scale and 1 / scale normal */
    default:   /* prime: every sub-block's quantum q >= 2^-124 and 1 / q normal */
        return c->shift_max + (uint32_t)c->mbits + 2u <= 253u
                   ? MV_F(c->shift_max + (uint32_t)c->mbits + 2u)
                   : MV_F(255);
    }
}
MV_INLINE uint32_t mv_hi(int K) { return K == MV_FL ? MV_F(227) : MV_F(253); }

/* All lanes lo <= M <= hi (prime's range may be empty). */
MV_INLINE int mv_in_range(int K, mvi M, const qk_mxbfp *c)
{
    uint32_t lo = mv_lo(K, c);
    mvi span = mv_u(mv_hi(K) - lo);
    return lo <= mv_hi(K) && mv_all(mv_eq(mv_maxu(mv_sub(M, mv_u(lo)), span), span));
}

/* Parameters from the block's exponent field M (prime has its own, per sub-block). */
MV_INLINE void mv_params(int K, int R, mvi M, const qk_mxbfp *c, mv_par *p)
{
    switch (K) {
    case MV_I8:
        if (R == 0) p->a = mv_i2f(mv_sub(mv_u(MV_F(260)), M));   /* 64 / scale */
        else p->a = mv_i2f(mv_sub(mv_u(MV_F(254)), M));          /* 1 / scale */
        p->b = mv_i2f(mv_sub(M, mv_u(MV_F(6))));                 /* scale / 64 */
        return;
    case MV_FL:   /* the type's smallest normal and largest value in x's scale */
        p->e = mv_add(M, mv_u((uint32_t)(c->emin - c->emax) << 23));
        p->f = mv_add(M, mv_u(mv_bits(c->max_norm) - MV_F(127 + c->emax)));
        p->a = mv_i2f(mv_u(MV_F(150 - c->mbits)));   /* 2^(23 - mbits) */
        return;
    default:   /* MV_BFP: v = m - 126 - mbits: 1 / scale, scale */
        p->a = mv_i2f(mv_sub(mv_u(MV_F(253 + c->mbits)), M));
        p->c = mv_i2f(mv_sub(M, mv_u(MV_F(c->mbits - 1))));
        return;
    }
}

/* to_bfp_prime: a sub-block's quantum q = 2^(m - shift + 1 - mbits) (b) and 1 / q (a), from
 * the block's field M and the sub-block's ms, shift = min(M - ms, 2^shift_bits - 1). */
MV_INLINE void mv_prime_params(mvi M, mvi ms, const qk_mxbfp *c, mv_par *p)
{
    /* the shift in the field (a difference of fields is at most 254) */
    mvi shift = mv_minu(mv_sub(M, ms), mv_u(MV_F(c->shift_max < 255u ? c->shift_max : 255u)));
    mvi q = mv_sub(mv_sub(M, shift), mv_u(MV_F(c->mbits - 1)));
    p->b = mv_i2f(q);
    p->a = mv_i2f(mv_sub(mv_u(MV_F(254)), q));
}

/* Forms a layer may give in fewer instructions (AVX-512: vpternlogd, vrangeps), with the
 * same bits:
 *   MV_SIGNOR(x, h): (x & sign) | h, h an mvi without its sign bit;
 *   MV_CLAMP(q, m): q clamped to [-m, m], m > 0 a float;
 *   MV_FLOOR_G(x, e): x's sign on max(2^(x's exponent), e), e a power of two as bits;
 *   MV_MAXMAG(r, f, x): r (of x's sign, or +0) at most the magnitude f (bits). */
#if !defined(MV_SIGNOR)
#define MV_SIGNOR(x, h) mv_i2f(mv_or(mv_and(mv_f2i(x), mv_u(MV_SIGN)), h))
#define MV_CLAMP(q, m) mv_maxf(mv_minf(q, mv_setf(m)), mv_setf(-(m)))
#define MV_FLOOR_G(x, e)                                                                 \
    mv_i2f(mv_or(mv_maxu(mv_and(mv_f2i(x), mv_u(MV_EXP)), e), mv_and(mv_f2i(x), mv_u(MV_SIGN))))
/* the smaller of r and +-f as bits is the smaller magnitude */
#define MV_MAXMAG(r, f, x) mv_i2f(mv_minu(mv_f2i(r), mv_or(f, mv_and(mv_f2i(x), mv_u(MV_SIGN)))))
#endif

/* One vector of elements of a block in range (to_bfp / prime: already at bfloat16 precision
 * when asked). */
MV_INLINE mvf mv_apply(int K, int R, mvf x, const mv_par *p, const qk_mxbfp *c)
{
    switch (K) {
    case MV_I8: {   /* mxb_mx_int8 */
        mvf q;
        if (R == 0) {   /* trunc(x f + 0.49999997): one rounding of the scaled value */
            mvf h = MV_SIGNOR(x, mv_u(MV_HALF_DOWN));
            q = mv_minf(mv_trunc(mv_fma(x, p->a, h)), mv_setf(127.0f));   /* |q| <= 128 */
        } else {   /* (x a) 64 in two steps, as the scalar form (the sign of an underflow) */
            q = mv_round(mv_mulf(mv_mulf(x, p->a), mv_setf(64.0f)), R, c);
            q = mv_maxf(mv_minf(q, mv_setf(127.0f)), mv_setf(-128.0f));
        }
        return mv_mulf(q, p->b);
    }
    case MV_FL: {   /* mxb_mx_float_fast: r = (x + g K) - g K, g = +-max(2^e, F) */
        mvf g = MV_FLOOR_G(x, p->e);
        mvf r = mv_fnma(g, p->a, mv_fma(g, p->a, x));
        return MV_MAXMAG(r, p->f, x);   /* r has x's sign or is +0 */
    }
    case MV_BFP: {   /* mxb_bfp: x / scale is one exact product here */
        mvf q;
        if (R == 0) {   /* trunc(x / scale + copysign(0.5 - 2^-25, x)) in one rounding */
            q = mv_trunc(mv_fma(x, p->a, MV_SIGNOR(x, mv_u(MV_HALF_DOWN))));
        } else {
            q = mv_round(mv_mulf(x, p->a), R, c);
        }
        /* q scale clamped to +-max_v = +-scale (2^mbits - 1) is q clamped to +-(2^mbits - 1),
         * then times the scale: a product with a power of two, exact here (also for +-0) */
        return mv_mulf(MV_CLAMP(q, (float)((1u << c->mbits) - 1u)), p->c);
    }
    default: {
        /* to_bfp_prime: the scalar form's integer rounding of the mantissa shifted right by
         * nb is |x| / q rounded (|x| / q = man 2^-nb, exact), at most 2^mbits - 1, times q;
         * the sign put back. Ties: mode 0 up, 2 to even, 1 up for positive x and down for
         * negative. The scalar form flushes subnormals to zero: with q >= 2^-124 (mv_lo),
         * |x| / q < 1/4 rounds to zero in every mode. */
        mvi u = mv_f2i(x), sgn = mv_and(u, mv_u(MV_SIGN)), a = mv_and(u, mv_u(MV_ABS));
        mvf t = mv_mulf(mv_i2f(a), p->a), r;
        int mode = R < 0 ? c->rounding : R;
        if (mode == 0) r = mv_trunc(mv_addf(t, mv_i2f(mv_u(MV_HALF_DOWN))));
        else r = mv_prime_round(t, sgn, mode);
        r = mv_minf(r, mv_setf((float)((1u << c->mbits) - 1u)));
        return mv_i2f(mv_or(mv_f2i(mv_mulf(r, p->b)), sgn));
    }
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

/* Vectors of the widest tiles (a layer with few registers may set 2). */
#if !defined(MV_TW)
#define MV_TW 4
#endif

/* One tile: n rows of nw vectors of columns at x, row stride st (W, a constant, 1 or MV_TW:
 * nw 1, or 2 to MV_TW). The block maxima a lane-wise max over the rows, then the rows
 * quantized, read again from x or, when `keep`, from a copy made in the first pass. Wide tiles
 * touch each line of a row once per pass (tiles of one vector would read and write every line
 * twice, in two tiles between which the other rows may have evicted it), and four vectors
 * (256 bytes of a row) took 10-15 % less time than two on 16x4096 along axis 0 (fewer passes
 * over as many rows). With W = 1 and `part`, the lanes of `out` are columns done before or
 * after: left out of the maxima (their blocks count as zeros) and stored back as they are in
 * y. Returns 0, writing nothing, when some lane's block is out of range. */
MV_INLINE int mv_tile(int K, int R, int W, int nw, const float *x, float *y, size_t n,
                      size_t st, int keep, int part, mvm out, const qk_mxbfp *c)
{
    /* vectors 0 and 1 always, 2 and 3 when nw says: one copy of the code for tiles of two to
     * four vectors */
#define MV_ON(w) ((w) < 2 || (w) < nw)
    mvf stash[MV_TW * MV_STASH];
    mvi A[MV_TW];
    mv_par p[MV_TW];
    const float *src = keep ? (const float *)(const void *)stash : x;
    size_t sst = keep ? (size_t)W * MV_W : st, r;
    for (int w = 0; w < MV_TW; w++) A[w] = mv_u(0u);
    if (keep) {
        for (r = 0; r < n; r++) {
            MV_PREFETCH(x + r * st + MV_PF * W * MV_W);
            MV_UNROLL
            for (int w = 0; w < W; w++) if (MV_ON(w)) {
                mvf v = mv_ldf(x + r * st + w * MV_W);
                stash[r * W + w] = v;
                A[w] = mv_maxu(A[w], mv_abs(v));
            }
        }
    } else {
        for (r = 0; r < n; r++) {
            MV_PREFETCH(x + r * st + MV_PF * W * MV_W);
            MV_UNROLL
            for (int w = 0; w < W; w++)
                if (MV_ON(w)) A[w] = mv_maxu(A[w], mv_abs(mv_ldf(x + r * st + w * MV_W)));
        }
    }
    if (part) A[0] = mv_sel(out, mv_u(0u), A[0]);
    MV_UNROLL
    for (int w = 0; w < W; w++) {   /* every w's (unused: 0), so that p[w] is always set */
        A[w] = mv_exp_of(A[w]);
        if (MV_ON(w) && !mv_in_range(K, A[w], c)) return 0;
    }
#define MV_ROW(r, w) mv_ldf(src + (r) * sst + (w) * MV_W)
    /* a row's vector w stored, the lanes of `out` as they are in y */
#define MV_ST(r, w, v)                                                                     \
    do {                                                                                   \
        float *yp_ = y + (r) * st + (w) * MV_W;                                            \
        mvf v_ = (v);                                                                      \
        mv_stf(yp_, part ? mv_self(out, mv_ldf(yp_), v_) : v_);                            \
    } while (0)
    if (K == MV_PRIME) {
        size_t ks = c->sub_block;
        for (size_t j = 0; j < n; j += ks) {
            size_t kk = n - j < ks ? n - j : ks;
            MV_UNROLL
            for (int w = 0; w < W; w++) {
                mvi ms = mv_u(0u);
                if (MV_ON(w))
                    for (r = j; r < j + kk; r++)
                        ms = mv_maxu(ms, mv_and(mv_f2i(MV_ROW(r, w)), mv_u(MV_EXP)));
                mv_prime_params(A[w], ms, c, &p[w]);
            }
            for (r = j; r < j + kk; r++)
                MV_UNROLL
                for (int w = 0; w < W; w++) if (MV_ON(w))
                    MV_ST(r, w, mv_apply(K, R, MV_ROW(r, w), &p[w], c));
        }
        return 1;
    }
    MV_UNROLL
    for (int w = 0; w < W; w++) mv_params(K, R, A[w], c, &p[w]);
    for (r = 0; r < n; r++)
        MV_UNROLL
        for (int w = 0; w < W; w++) if (MV_ON(w))
            MV_ST(r, w, mv_apply(K, R, MV_ROW(r, w), &p[w], c));
#undef MV_ST
#undef MV_ON
#undef MV_ROW
    return 1;
}

/* Rows of a block through which its last inner % MV_W columns go through a copy padded to a
 * whole vector (more: the scalar kernel does those columns). */
#define MV_COPY_ROWS 128

/* Blocks of more rows than this along a middle axis go to the scalar kernel (their tiles
 * would not stay in L1). */
#define MV_MAX_ROWS 4096

/* outer slabs of len rows of `inner` columns, blocks of c->block rows; the tiles out of range
 * go to the scalar kernel. */
MV_INLINE void mv_vert(int K, int R, const float *x, float *y, size_t outer, size_t len,
                       size_t inner, const qk_mxbfp *cp)
{
    qk_mxbfp cc = *cp;
    const qk_mxbfp *c = &cc;
    size_t bs = c->block;
    int keep = mv_keep(inner, bs < len ? bs : len);
    float buf[MV_COPY_ROWS * MV_W];
    /* Numpy's arrays are 16-byte aligned: when every row starts at the same offset in a cache
     * line (inner a multiple of 16), the first `head` columns of each block go first, a
     * vector at a time with the lanes past them left out, so that the tiles after them store
     * whole cache lines: split over two lines, the stores of 16x4096 along axis 0 took 1.6x
     * (AVX-512) to 1.8x (AVX2) as long. */
    size_t head = 0;
#if defined(MV_TAILMASK)
    if (MV_W * sizeof(float) > 16 && inner % 16 == 0 && inner >= 8 * MV_W &&
        (uintptr_t)y % 4 == 0)
        head = (16 - (uintptr_t)y / 4 % 16) % 16;
#endif
    for (size_t o = 0; o < outer; o++, x += len * inner, y += len * inner)
        for (size_t r = 0; r < len; r += bs) {
            size_t n = len - r < bs ? len - r : bs;
            const float *xb = x + r * inner;
            float *yb = y + r * inner;
            if (n > MV_MAX_ROWS) {
                qk_mxbfp_scalar_cols(xb, yb, n, inner, 0, inner, cp);
                continue;
            }
            for (size_t col = 0; col < inner;) {
                size_t k = inner - col, st = inner;
                const float *xs = xb + col;
                float *ys = yb + col;
                mvm out = mv_firstm(0);
                int copy = 0, part = 0;
#if !defined(MV_TILE1)
                if (col >= head && k >= 2 * MV_W) {   /* the wide tiles */
                    size_t nw = k / MV_W < MV_TW ? k / MV_W : MV_TW;
                    if (!mv_tile(K, R, MV_TW, (int)nw, xs, ys, n, inner, keep, 0, out, c))
                        qk_mxbfp_scalar_cols(xb, yb, n, inner, col, nw * MV_W, cp);
                    col += nw * MV_W;
                    continue;
                }
#endif
                /* one vector (a single call site: one copy of its code): the first `head`
                 * columns, the lanes past them left out; or the last k < MV_W columns, through
                 * a copy padded with 1.0 (a value in every range; the padding lanes are blocks
                 * of their own), or with MV_TAILMASK (the layer's blend is cheap) in the row's
                 * last vector, its lanes before col left out and stored back as they are in y */
                if (col < head) {
                    k = head - col < MV_W ? head - col : MV_W;
                    part = k < MV_W;
                    out = mv_mandnot(mv_firstm(MV_W), mv_firstm(k));
                } else if (k < MV_W) {
                    copy = 1;
#if defined(MV_TAILMASK)
                    if (inner >= MV_W) {
                        xs = xb + inner - MV_W;
                        ys = yb + inner - MV_W;
                        part = 1;
                        out = mv_firstm(MV_W - k);
                        copy = 0;
                    }
#endif
                }
                if (copy) {
                    if (n > MV_COPY_ROWS) {
                        qk_mxbfp_scalar_cols(xb, yb, n, inner, col, k, cp);
                        break;
                    }
#if !defined(MV_TAILMASK)
                    if (inner >= MV_W) {   /* the row's last vector, the lanes before col 1.0 */
                        for (size_t i = 0; i < n; i++)
                            mv_stf(buf + i * MV_W, mv_self(mv_firstm(MV_W - k), mv_setf(1.0f),
                                                           mv_ldf(xb + inner - MV_W + i * inner)));
                    } else
#endif
                    {
                        for (size_t i = 0; i < n; i++)
                            for (size_t j = 0; j < MV_W; j++) buf[i * MV_W + j] = j < k ? xs[i * inner + j] : 1.0f;
                    }
                    xs = ys = buf;
                    st = MV_W;
                }
                if (k > MV_W) k = MV_W;
                if (!mv_tile(K, R, 1, 1, xs, ys, n, st, keep && k == MV_W && !part, part, out, c)) {
                    qk_mxbfp_scalar_cols(xb, yb, n, inner, col, k, cp);
#if !defined(MV_TAILMASK)
                } else if (copy && inner >= MV_W) {
                    /* back into the row's last vector, its lanes before col as they are in y
                     * (final: written by the tiles before) */
                    for (size_t i = 0; i < n; i++) {
                        float *yr = yb + inner - MV_W + i * inner;
                        mv_stf(yr, mv_self(mv_firstm(MV_W - k), mv_ldf(yr), mv_ldf(buf + i * MV_W)));
                    }
#endif
                } else if (copy) {
                    for (size_t i = 0; i < n; i++)
                        for (size_t j = 0; j < k; j++) yb[col + i * inner + j] = buf[i * MV_W + j];
                }
                col += k;
            }
        }
}

/* ------------------------------------------------------------------ blocks along rows */

/* One block of n contiguous elements; `end` is where this call's data ends. Returns 0,
 * writing nothing, when the block is out of range. */
MV_INLINE int mv_rblock(int K, int R, const float *x, float *y, size_t n, const float *end,
                        const qk_mxbfp *c)
{
    size_t nv = n / MV_W, k = n % MV_W, j;
    int direct = 1;
    mvi A = mv_u(0u);
    mvf part = mv_setf(0.0f), pin = part;
    for (j = 0; j < nv; j++) A = mv_maxu(A, mv_abs(mv_ldf(x + j * MV_W)));
    if (k) {
        /* a whole vector where it stays inside this call's data (its other lanes are written
         * back as they were), else only the k lanes */
        direct = end - (x + nv * MV_W) >= (ptrdiff_t)MV_W;
        part = direct ? mv_ldf(x + nv * MV_W) : mv_ldpart(x + nv * MV_W, k);
        pin = part;
        A = mv_maxu(A, mv_first(mv_abs(pin), k));
    }
    mvi M = mv_exp_of(mv_hmaxu(A));
    uint32_t lo = mv_lo(K, c), m = mv_lane0(M);
    if (lo > mv_hi(K) || m - lo > mv_hi(K) - lo) return 0;
    mv_par p;
    mvf r;
    if (K == MV_PRIME) {
        size_t ks = c->sub_block;
        if (ks < MV_W) {   /* sub-blocks inside vectors */
            for (j = 0; j < nv; j++) {
                mvf v = mv_ldf(x + j * MV_W);
                mv_prime_params(M, mv_segmax(mv_and(mv_f2i(v), mv_u(MV_EXP)), ks), c, &p);
                mv_stf(y + j * MV_W, mv_apply(K, R, v, &p, c));
            }
            if (k) mv_prime_params(M, mv_segmax(mv_first(mv_and(mv_f2i(pin), mv_u(MV_EXP)), k), ks), c, &p);
        } else {   /* sub-blocks of g = ks / MV_W vectors (mv_prime_rows_ok) */
            size_t g = ks / MV_W;
            for (j = 0; j < nv; j += g) {
                size_t e = j + g < nv ? j + g : nv, i;
                mvi ms = mv_u(0u);
                for (i = j; i < e; i++)
                    ms = mv_maxu(ms, mv_and(mv_f2i(mv_ldf(x + i * MV_W)), mv_u(MV_EXP)));
                if (k && nv < j + g) ms = mv_maxu(ms, mv_first(mv_and(mv_f2i(pin), mv_u(MV_EXP)), k));
                mv_prime_params(M, mv_hmaxu(ms), c, &p);
                for (i = j; i < e; i++)
                    mv_stf(y + i * MV_W, mv_apply(K, R, mv_ldf(x + i * MV_W), &p, c));
            }
            if (k && nv % g == 0)
                mv_prime_params(M, mv_hmaxu(mv_first(mv_and(mv_f2i(pin), mv_u(MV_EXP)), k)), c, &p);
        }
    } else {
        mv_params(K, R, M, c, &p);
        for (j = 0; j < nv; j++)
            mv_stf(y + j * MV_W, mv_apply(K, R, mv_ldf(x + j * MV_W), &p, c));
    }
    if (!k) return 1;
    r = mv_apply(K, R, pin, &p, c);
    if (direct) mv_stf(y + nv * MV_W, mv_self(mv_firstm(k), r, part));
    else mv_stpart(y + nv * MV_W, r, k);
    return 1;
}

/* Blocks of at most MV_GMAX vectors go MV_W at a time through one reduction (a layer may
 * set 1: blocks of one vector only, less code). */
#if !defined(MV_GMAX)
#define MV_GMAX 4
#endif

/* The exponent fields (mv_exp_of) of MV_W blocks of n <= MV_GMAX MV_W elements at x + j st,
 * j < MV_W: lane j block j's. Each block's last vector first (whole: the caller keeps it inside
 * the data; its lanes past the block's end masked out), then the others: a loop over the
 * vectors around one over the blocks keeps the maxima in registers. One function for every
 * kind (it does not depend on it). */
MV_NOINLINE mvi mv_maxes(const float *x, size_t st, size_t n)
{
    size_t last = (n - 1) / MV_W * MV_W;
    mvi am = mv_first(mv_u(MV_ABS), n - last), acc[MV_W];
    MV_UNROLL
    for (int j = 0; j < MV_W; j++) acc[j] = mv_and(mv_f2i(mv_ldf(x + j * st + last)), am);
#if MV_GMAX > 1
    for (size_t g = 0; g < last; g += MV_W) {
        MV_UNROLL
        for (int j = 0; j < MV_W; j++) acc[j] = mv_maxu(acc[j], mv_abs(mv_ldf(x + j * st + g)));
    }
#endif
    return mv_exp_of(mv_reduce(acc));
}

/* `count` blocks of n <= MV_GMAX MV_W elements at x + i st, i < count, in memory order
 * (nothing past `end` is touched), MV_W at a time: each block's G = ceil(n / MV_W) vectors
 * (the lanes of the last one past the block's end masked out) reduced to one vector of
 * maxima, the MV_W blocks' maxima then from one reduction (mv_reduce); each block then
 * quantized from x again (L1) and stored, the lanes of its last vector past its end written
 * back as they were loaded. Those lanes reach only blocks stored later (the callers keep that
 * order), which leaves every element right; in place they are unchanged. Groups out of range
 * go to the scalar kernel. Returns the blocks done (a multiple of MV_W): the caller does the
 * others (the last count % MV_W, and those whose group would read past `end`). */
MV_INLINE size_t mv_family(int K, int R, const float *x, float *y, size_t count, size_t st,
                           size_t n, const float *end, const qk_mxbfp *cp)
{
    qk_mxbfp cc = *cp;
    const qk_mxbfp *c = &cc;
    size_t last = (n - 1) / MV_W * MV_W, kl = n - last, i = 0;   /* the last vector: kl lanes */
    mvi am = mv_first(mv_u(MV_ABS), kl);
    mvm fm = mv_firstm(kl);
    for (; i + MV_W <= count && end - (x + i * st) >= (ptrdiff_t)((MV_W - 1) * st + last + MV_W);
         i += MV_W) {
        const float *xg = x + i * st;
        float *yg = y + i * st;
        uint32_t mx[MV_W];
        mv_par p;
        mvi all = mv_maxes(xg, st, n);
        if (!mv_in_range(K, all, c)) {   /* NaN / inf or extreme values: rare */
            for (int j = 0; j < MV_W; j++) qk_mxbfp_scalar(xg + j * st, yg + j * st, 1, n, 1, cp);
            continue;
        }
        mv_sti(mx, all);
        for (int j = 0; j < MV_W; j++) {
            const float *xj = xg + j * st;
            float *yj = yg + j * st;
            mvi M = mv_u(mx[j]);
            if (K != MV_PRIME) mv_params(K, R, M, c, &p);
            /* the whole vectors: unrolled for up to MV_GMAX - 1 of them */
#define MV_FV(g)                                                                           \
    do {                                                                                   \
        mvf in = mv_ldf(xj + (g) * MV_W);                                             \
        if (K == MV_PRIME)                                                                 \
            mv_prime_params(M, mv_segmax(mv_and(mv_f2i(in), mv_u(MV_EXP)), c->sub_block), c, &p); \
        mv_stf(yj + (g) * MV_W, mv_apply(K, R, in, &p, c));                                \
    } while (0)
#if MV_GMAX > 1
            switch (last / MV_W) {
            case 3: MV_FV(2); /* fall through */
            case 2: MV_FV(1); /* fall through */
            case 1: MV_FV(0); /* fall through */
            default: break;
            }
#endif
#undef MV_FV
            mvf v = mv_ldf(xj + last), in = v;
            if (K == MV_PRIME)
                mv_prime_params(M, mv_segmax(mv_and(mv_and(mv_f2i(in), am), mv_u(MV_EXP)),
                                             c->sub_block), c, &p);
            mv_stf(yj + last, mv_self(fm, mv_apply(K, R, in, &p, c), v));
        }
    }
    return i;
}

#if defined(MV_PERM)
#if defined(MV_HALVES)
/* The exponent fields of the two halves (lanes 0 .. MV_W / 2 - 1 and the rest) of MV_W rows
 * of L <= MV_W elements at x + j L (lanes past L as zeros; the caller keeps the whole vectors
 * inside the data): (row j, half h) at lane MV_HALF_IDX(j, h) of h[0], h[1]. */
MV_NOINLINE void mv_maxes_halves(const float *x, size_t L, mvi *h)
{
    mvi am = mv_first(mv_u(MV_ABS), L), acc[MV_W];
    MV_UNROLL
    for (int j = 0; j < MV_W; j++) acc[j] = mv_and(mv_f2i(mv_ldf(x + j * L)), am);
    MV_HALVES(acc, h);
    h[0] = mv_exp_of(h[0]);
    h[1] = mv_exp_of(h[1]);
}
#endif

/* Rows of Lr elements with blocks of bs = min(c->block, Lr) from each row's start (a stream of
 * equal blocks: Lr the block; or the rows of the call), in groups of MV_W units of L = Lr or
 * 2 Lr elements (a unit of two blocks of half a vector each: MV_HALVES), which fill L vectors
 * exactly, at most two blocks per unit: block 0 the first min(bs, L) columns, block 1 the rest.
 * The blocks' maxima over the group's units come from one reduction per block (mv_maxes, the
 * lanes of a block's last vector past its end zeros; or one for both halves), and each vector
 * takes its lanes' exponents from them by a permutation (lane l of vector v is unit
 * (v MV_W + l) / L): whole vectors only, no blend, for blocks that end inside vectors (rows of
 * 7 or 14, blocks of 8 over rows of 14, blocks of 8 on 16 lanes). to_bfp_prime only with its
 * sub-blocks whole aligned groups of lanes (the caller checks). Groups out of range go to the
 * scalar kernel. Returns the units done (a multiple of MV_W). */
MV_INLINE size_t mv_group(int K, int R, const float *x, float *y, size_t units, size_t L,
                          size_t Lr, const qk_mxbfp *cp)
{
    qk_mxbfp cc = *cp;
    const qk_mxbfp *c = &cc;
    size_t bs = c->block < Lr ? c->block : Lr, nb = bs < L ? 2 : 1, i = 0;
    uint32_t pidx[MV_GMAX * MV_W * MV_W];   /* the permutations: unit, + MV_W in block 1 */
    /* a group's last reads reach up to MV_W elements past it: one more vector in the data,
     * else the caller does that group */
    units = units > (MV_W + L - 1) / L ? units - (MV_W + L - 1) / L : 0;
#if defined(MV_HALVES)
    int half = nb == 2 && 2 * bs == MV_W && L <= MV_W;
#endif
    if (units < MV_W) return 0;
    /* lane l: unit u = l / L, at column l % L (counters: a division per lane had cost 1-6 µs
     * per call, more than the whole of a small one) */
    for (size_t l = 0, u = 0, col = 0; l < L * MV_W; l++) {
        size_t b = col >= bs;
#if defined(MV_HALVES)
        if (half)
            pidx[l] = (uint32_t)MV_HALF_IDX(u, b);
        else
#endif
            pidx[l] = (uint32_t)(u + b * MV_W);
        if (++col == L) col = 0, u++;
    }
    for (; i + MV_W <= units; i += MV_W) {
        const float *xg = x + i * L;
        float *yg = y + i * L;
        mvi all[2];
        int ok = 1;
#if defined(MV_HALVES)
        if (half) {
            mv_maxes_halves(xg, L, all);
            ok = mv_in_range(K, all[0], c) && mv_in_range(K, all[1], c);
        } else
#endif
            for (size_t b = 0; b < nb && ok; b++) {
                all[b] = mv_maxes(xg + b * bs, L, b ? L - bs : bs);
                ok = mv_in_range(K, all[b], c);
            }
        if (!ok) {   /* NaN / inf or extreme values: rare */
            qk_mxbfp_scalar(xg, yg, MV_W * (L / Lr), Lr, 1, cp);
            continue;
        }
        /* one loop per number of blocks (gcc kept the choice inside the loop) */
#define MV_GVEC(PERM)                                                                      \
    for (size_t v = 0; v < L; v++) {                                                       \
        mvi idx = mv_f2i(mv_ldf((const float *)(const void *)(pidx + v * MV_W)));           \
        mvi M = PERM;                                                                      \
        mvf in = mv_ldf(xg + v * MV_W);                                                    \
        mv_par p;                                                                          \
        if (K == MV_PRIME)                                                                 \
            mv_prime_params(M, mv_segmax(mv_and(mv_f2i(in), mv_u(MV_EXP)), c->sub_block), c, &p); \
        else                                                                               \
            mv_params(K, R, M, c, &p);                                                     \
        mv_stf(yg + v * MV_W, mv_apply(K, R, in, &p, c));                                  \
    }
        if (nb > 1)
            MV_GVEC(MV_PERM2(all[0], all[1], idx))
        else
            MV_GVEC(MV_PERM(all[0], idx))
#undef MV_GVEC
    }
    return i;
}
#endif

typedef size_t (*mv_family_fn)(const float *x, float *y, size_t count, size_t st, size_t n,
                               const float *end, const qk_mxbfp *c);

/* outer rows of len elements, blocks of c->block from each row's start. Blocks of at most
 * MV_GMAX vectors that follow each other (or rows of such blocks of whole vectors and one
 * shorter last block) go in groups (`family`), others one at a time. */
typedef void (*mv_one_fn)(const float *x, float *y, size_t n, const float *end,
                          const qk_mxbfp *c);

#if defined(MV_PERM)
/* The row length of mv_group for rows of len (0: not its layout): blocks that end inside
 * vectors (or blocks of one vector: a permutation is a broadcast), in rows of L, L a block of
 * a stream of equal blocks (len a multiple of the block, or at most one) or a row of two
 * blocks; to_bfp_prime only with its sub-blocks aligned groups of lanes. */
MV_INLINE size_t mv_group_rows(int K, size_t len, const qk_mxbfp *c)
{
    size_t bs = c->block, ks = c->sub_block, L = len % bs == 0 || len <= bs ? (bs < len ? bs : len) : len;
    if (L <= MV_GMAX * MV_W && L <= 2 * bs && (L % MV_W || L == MV_W || (L > bs && bs % MV_W)) &&
        (K != MV_PRIME || (ks <= MV_W && !(ks & (ks - 1)) && L % ks == 0 && bs % ks == 0)))
        return L;
    return 0;
}
#endif

typedef size_t (*mv_group_fn)(const float *x, float *y, size_t units, size_t L, size_t Lr,
                              const qk_mxbfp *c);

MV_INLINE void mv_rows(int K, int R, mv_family_fn family, mv_group_fn group, mv_one_fn one,
                       const float *x, float *y, size_t outer, size_t len, const qk_mxbfp *cp)
{
    qk_mxbfp cc = *cp;
    const qk_mxbfp *c = &cc;
    const float *end = x + outer * len;
    size_t bs = c->block, most = bs < len ? bs : len, rem = len % bs;
    (void)R;
    /* to_bfp_prime's sub-blocks of more than a vector only one block at a time */
    int fam = most <= MV_GMAX * MV_W && (K != MV_PRIME || most <= MV_W || c->sub_block <= MV_W);
#if defined(MV_ROWS128)
    /* the layer's own form for four blocks of 32 at a time */
    if (bs == 32 && (K == MV_FL || (K == MV_I8 && R == 0)) && len >= 128) fam = 0;
#endif
#define MV_ONE(xb, yb, n) one(xb, yb, n, end, cp)
    (void)group;
#if defined(MV_PERM)
    if (fam) {
        size_t L = mv_group_rows(K, len, c), i, u = 1;
        if (L) {
            size_t rows = outer * (len / L);
#if defined(MV_HALVES)
            if (L == most && 2 * L == MV_W) u = 2;   /* blocks of half a vector: in pairs */
#endif
            i = group(x, y, rows / u, u * L, L, cp) * u;
            if (L == most) {   /* the last blocks of the stream */
                for (; i < rows; i++) MV_ONE(x + i * L, y + i * L, L);
                return;
            }
            x += i * len, y += i * len, outer -= i;   /* the last rows below */
        }
    }
#endif
    if (fam && (rem == 0 || len <= bs)) {   /* one stream of equal blocks */
        size_t count = outer * (len / most), i = family(x, y, count, most, most, end, cp);
        for (; i < count; i++) MV_ONE(x + i * most, y + i * most, most);
        return;
    }
    if (fam && bs % MV_W == 0) {
        /* rows of whole vectors and one short block: per MV_W rows, the short blocks first
         * (their overlap reaches the next row's first block), then each column of blocks;
         * whatever a group leaves (its reads would pass `end`) one at a time, in that order */
        size_t o = 0;
        for (; o + MV_W <= outer; o += MV_W) {
            const float *xo = x + o * len;
            float *yo = y + o * len;
            size_t i = family(xo + len - rem, yo + len - rem, MV_W, len, rem, end, cp);
            for (; i < MV_W; i++) MV_ONE(xo + i * len + len - rem, yo + i * len + len - rem, rem);
            for (size_t r = 0; r + bs <= len; r += bs) {
                i = family(xo + r, yo + r, MV_W, len, bs, end, cp);
                for (; i < MV_W; i++) MV_ONE(xo + i * len + r, yo + i * len + r, bs);
            }
        }
        x += o * len, y += o * len, outer -= o;
    }
    for (size_t o = 0; o < outer; o++, x += len, y += len)
        for (size_t r = 0; r < len; r += bs) {
            size_t n = len - r < bs ? len - r : bs;
#if defined(MV_ROWS128)
            if (bs == 32 && (K == MV_FL || (K == MV_I8 && R == 0)) && len - r >= 128 &&
                MV_ROWS128(x + r, y + r, K == MV_I8, cp)) {
                r += 96;
                continue;
            }
#endif
            MV_ONE(x + r, y + r, n);
        }
#undef MV_ONE
}

/* ------------------------------------------------------------------ entry points */

/* to_bfp_prime compiled: always without a fallback kernel; a layer with one may ask for it
 * (MV_PRIME_TOO: the kind where its lanes gain the most) */
#if !defined(MV_FALLBACK) || defined(MV_PRIME_TOO)
#define MV_HAS_PRIME 1
#else
#define MV_HAS_PRIME 0
#endif

#if MV_HAS_PRIME
/* Whether the rows form handles this to_bfp_prime layout (sub-blocks aligned in vectors). */
static int mv_prime_rows_ok(const qk_mxbfp *c)
{
    size_t ks = c->sub_block;
    if (ks & (ks - 1)) return 0;   /* a power of two: aligned groups of lanes */
    return ks < MV_W || ks % MV_W == 0;
}
#endif

typedef void (*mv_run_fn)(const float *x, float *y, size_t outer, size_t len, size_t inner,
                          const qk_mxbfp *c);
#if defined(MV_PERM)
#define MV_GROUP_DEF(K, R, N)                                                            \
    MV_NOINLINE size_t mv_group_##N(const float *x, float *y, size_t units, size_t L,     \
                                    size_t Lr, const qk_mxbfp *c)                        \
    {                                                                                    \
        return mv_group(K, R, x, y, units, L, Lr, c);                                    \
    }
#define MV_GROUP_PTR(N) mv_group_##N
#else
#define MV_GROUP_DEF(K, R, N)
#define MV_GROUP_PTR(N) ((mv_group_fn)0)
#endif
#define MV_RUN(K, R, N)                                                                  \
    static size_t mv_family_##N(const float *x, float *y, size_t count, size_t st,        \
                                size_t n, const float *end, const qk_mxbfp *c)           \
    {                                                                                    \
        return mv_family(K, R, x, y, count, st, n, end, c);                              \
    }                                                                                    \
    static void mv_one_##N(const float *x, float *y, size_t n, const float *end,          \
                           const qk_mxbfp *c)                                            \
    {                                                                                    \
        if (!mv_rblock(K, R, x, y, n, end, c)) qk_mxbfp_scalar(x, y, 1, n, 1, c);        \
    }                                                                                    \
    MV_GROUP_DEF(K, R, N)                                                                \
    static void mv_run_##N(const float *x, float *y, size_t outer, size_t len,            \
                           size_t inner, const qk_mxbfp *c)                              \
    {                                                                                    \
        if (inner == 1)                                                                  \
            mv_rows(K, R, mv_family_##N, MV_GROUP_PTR(N), mv_one_##N, x, y, outer, len, c); \
        else                                                                             \
            mv_vert(K, R, x, y, outer, len, inner, c);                                   \
    }
/* The kinds compiled: rounding modes 0, 2 and 1 of int8 and 0 of to_bfp (Quark's default)
 * fixed at compile time, the other modes of to_bfp and to_bfp_prime with the mode read per
 * vector. A layer may define MV_FALLBACK (a kernel of another instruction set this CPU also
 * runs) to compile only the first four. */
MV_RUN(MV_I8, 0, i8r0)       /* int8, rounding mode 0 */
MV_RUN(MV_I8, 2, i8r2)       /* int8, rounding mode 2 */
MV_RUN(MV_FL, 0, fl)         /* the float element types */
MV_RUN(MV_BFP, 0, bfp0)      /* to_bfp, rounding mode 0 */
#if !defined(MV_FALLBACK)
MV_RUN(MV_I8, 1, i8)         /* int8, rounding mode 1 */
MV_RUN(MV_BFP, -1, bfp)      /* to_bfp, other settings */
#endif
#if !defined(MV_FALLBACK)
MV_RUN(MV_PRIME, -1, prime)  /* to_bfp_prime */
#elif MV_HAS_PRIME && defined(MV_PERM)
/* to_bfp_prime with a fallback kernel: along a middle axis, and rows in groups (mv_group);
 * other rows, and the rows a group leaves, to the fallback (less code) */
MV_GROUP_DEF(MV_PRIME, -1, prime)
static void mv_run_prime(const float *x, float *y, size_t outer, size_t len, size_t inner,
                         const qk_mxbfp *c)
{
    size_t L = mv_group_rows(MV_PRIME, len, c), rows, i = 0, u = 1;
    if (inner != 1) {
        mv_vert(MV_PRIME, -1, x, y, outer, len, inner, c);
        return;
    }
    if (!L) {
        MV_FALLBACK(x, y, outer, len, 1, c);
        return;
    }
    rows = outer * (len / L);
#if defined(MV_HALVES)
    if (L == (c->block < len ? c->block : len) && 2 * L == MV_W) u = 2;   /* as mv_rows */
#endif
    i = mv_group_prime(x, y, rows / u, u * L, L, c) * u;
    if (i < rows) MV_FALLBACK(x + i * L, y + i * L, rows - i, L, 1, c);
}
#endif

/* x at bfloat16 precision into y, n elements */
static void mv_to_bfloat(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + MV_W <= n; i += MV_W) mv_stf(y + i, mv_bfloat(mv_ldf(x + i)));
    if (i < n) mv_stpart(y + i, mv_bfloat(mv_ldpart(x + i, n - i)), n - i);
}

void MXB_NAME(const float *x, float *y, size_t outer, size_t len, size_t inner,
              const qk_mxbfp *c)
{
    mv_run_fn run = NULL;
    qk_mxbfp cc;
    if (c->method >= QK_BFP && c->to_bfloat) {
        /* every rule reads x only through its bfloat16 value: convert first, then quantize
         * that in place, so that no kind carries the conversion */
        mv_to_bfloat(x, y, outer * len * inner);
        cc = *c;
        cc.to_bfloat = 0;
        c = &cc;
        x = y;
    }
    switch (c->method) {
    case QK_MX_FLOAT: run = mv_run_fl; break;
    case QK_MX_INT8:
        if (c->rounding == 0) run = mv_run_i8r0;
        else if (c->rounding == 2) run = mv_run_i8r2;
#if !defined(MV_FALLBACK)
        else run = mv_run_i8;
#endif
        break;
    case QK_BFP:
        if (c->rounding == 0 && !c->to_bfloat) run = mv_run_bfp0;
#if !defined(MV_FALLBACK)
        else run = mv_run_bfp;
#endif
        break;
    default:
#if MV_HAS_PRIME
        if (inner == 1 && !mv_prime_rows_ok(c)) {
            qk_mxbfp_scalar(x, y, outer, len, 1, c);
            return;
        }
        run = mv_run_prime;
#endif
        break;
    }
#if defined(MV_FALLBACK)
    if (!run) {
        MV_FALLBACK(x, y, outer, len, inner, c);
        return;
    }
#endif
    run(x, y, outer, len, inner, c);
}

/* Exponent fields + 1 in the field, 0 for NaN / inf (the wrap of field 255); unfin: back to
 * the field, 0 when no lane was finite. */
MV_INLINE mvi mv_fin(mvf x) { return mv_and(mv_add(mv_f2i(x), mv_u(0x00800000u)), mv_u(MV_EXP)); }
MV_INLINE mvi mv_unfin(mvi m) { return mv_sub(mv_maxu(m, mv_u(0x00800000u)), mv_u(0x00800000u)); }

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
