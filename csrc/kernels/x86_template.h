/* Run drivers shared by the x86 kernel files (sse41.c, avx2.c, avx512.c).
 *
 * Not a standalone header: the including file first defines its vector layer over one vector
 * of QV_W float32 / int32 lanes (types vf, vi, vm; QV_HAVE_F16C), then includes this file
 * once. The layer provides: qv_set1, qv_set1_i, qv_loadu_f, qv_loadu_i, qv_storeu_f,
 * qv_storeu_i, qv_div, qv_mul, qv_max, qv_min (x86 operand order), qv_cvt (nearest-even),
 * qv_cvt_i2f, qv_add_i, qv_sub_i, qv_mask (output mask), qv_load_x (QV_W inputs as
 * float32), qv_round_bf16, qv_round_f16 (with F16C), qv_store1 / qv_store4 (QV_W / 4 QV_W
 * codes to an output kind), qv_load_codes (QV_W dequantize inputs as int32),
 * qv_store_out (QV_W floats out), and qv_stream64 (a non-temporal store of 64 bytes to an
 * aligned line; the operator layer fences once per piece of work, not per run).
 * The hot loops are inlined into one function per table entry, so element type, quotient
 * precision and output kind are constants in them; the rare paths are out of line.
 *
 * Bit-exactness rests on doing the same float32 operations as scalar.c, in the same order:
 * the same correctly rounded division, the same rounding to float16 / bfloat16, the same
 * clamp (max/min ordered so that NaN picks the low bound, as the scalar `q > lo ? q : lo`),
 * and a round-to-nearest-even conversion of an already clamped value.
 * With FMA (QV_HAVE_FMA: qv_fmadd, qv_fnmadd, qv_max_i, qv_min_i) the
 * division is replaced by the exact reciprocal form of docs/EXACT-DIVISION.md: it rounds to
 * the same integer as the true quotient whenever the operator layer passes reciprocals
 * (p->rscale); runs without them go to the scalar kernel, which divides.
 *
 * Memory: vectors only ever touch whole elements of the run. A run that ends mid-vector
 * ends with a full vector overlapping the previous one (same bytes written again) when x
 * and y do not overlap, else through small stack buffers. Packed sub-byte data is written
 * vector-wise only on whole bytes; the partial bytes at either end are read-modify-written
 * one element at a time. Elements are completed in memory order, so that y == x works. */
#ifndef QSIMD_X86_TEMPLATE_H
#define QSIMD_X86_TEMPLATE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"
#include "convert.h"

#if defined(_MSC_VER) && !defined(__clang__)
#define QT_INLINE static __forceinline
#else
#define QT_INLINE static inline __attribute__((always_inline))
#endif

/* Partial vectors and the partial bytes at the ends of packed data: out of line, shared by
 * every instantiation, to keep the code (and the compile time) small. */
#if defined(_MSC_VER) && !defined(__clang__)
#define QT_COLD static __declspec(noinline)
#else
#define QT_COLD static __attribute__((noinline, cold))
#endif

/* Shared helpers that are not rare but not worth a copy in every table entry either. */
#if defined(_MSC_VER) && !defined(__clang__)
#define QT_NOINLINE static __declspec(noinline)
#else
#define QT_NOINLINE static __attribute__((noinline))
#endif

#define QT_U (4 * QV_W)   /* elements per unrolled step */
#define QT_EXP 256        /* elements per expansion of small-block parameters */

#ifndef QV_HAVE_FMA
#define QV_HAVE_FMA 0
#endif
/* The reciprocal form's bound on |x / s| before the correction: a power of two above every
 * |q| that does not saturate (|qmax - qmin| < 2^16), so that clamping there changes no
 * result, and small enough that QT_RK * |s| stays finite (|s| <= QK_RECIP_MAX). */
#define QT_RK 131072.0f

/* Runs with one entry per blk elements take the per-element form (parameters per vector,
 * whole 4-vector steps across entries) instead of a single-scale loop per block when the
 * blocks are shorter than a vector, and with FMA also when they are shorter than a 4-vector
 * step or whole vectors up to QT_BCMAX long: per block, the single-scale setup and its
 * 1-vector stores would cost more than a broadcast of the entry per vector. */
#define QT_BCMAX 64
#define QT_PERELEM(blk) ((blk) < QV_W || (QV_HAVE_FMA && ((blk) < QT_U || \
                                          ((blk) % QV_W == 0 && (blk) <= QT_BCMAX))))

/* Scale and zero point of each element of [first, first + m), with one entry per blk
 * elements: each entry is stored as whole vectors whose excess the next entry overwrites,
 * so sb and zb need room for m + QV_W values. */
QT_NOINLINE void qt_expand(const float *scale, const int32_t *zp, size_t blk, size_t first,
                           size_t m, float *sb, int32_t *zb)
{
    size_t e = first / blk, k = 0, len = blk - first % blk;
    for (; k < m; k += len, len = blk, e++) {
        vf sv = qv_set1(scale[e]);
        vi zv = qv_set1_i(zp ? zp[e] : 0);
        for (size_t j = 0; j < len && k + j < m; j += QV_W) {
            qv_storeu_f(sb + k + j, sv);
            qv_storeu_i(zb + k + j, zv);
        }
    }
}

/* The same for one more float array (the reciprocals), into rb. */
QT_NOINLINE void qt_expand_f(const float *v, size_t blk, size_t first, size_t m, float *rb)
{
    size_t e = first / blk, k = 0, len = blk - first % blk;
    for (; k < m; k += len, len = blk, e++) {
        vf rv = qv_set1(v[e]);
        for (size_t j = 0; j < len && k + j < m; j += QV_W) qv_storeu_f(rb + k + j, rv);
    }
}

/* ---- scalar helpers: one element, exactly as scalar.c computes it ---- */

QT_INLINE size_t qt_xsize(int xk) { return xk == QK_X_F32 || xk == QK_X_I32 ? 4u : 2u; }

QT_INLINE float qt_load_xf(int xk, const void *x, size_t i)
{
    uint16_t h;
    switch (xk) {
    case QK_X_F32: { float f; memcpy(&f, (const char *)x + 4 * i, 4); return f; }
    case QK_X_F16: memcpy(&h, (const char *)x + 2 * i, 2); return qk_f16_to_f32(h);
    case QK_X_BF16: memcpy(&h, (const char *)x + 2 * i, 2); return qk_bf16_to_f32(h);
    default: { int32_t v; memcpy(&v, (const char *)x + 4 * i, 4); return (float)v; }
    }
}

QT_INLINE int32_t qt_quant1(int xk, int qk, const void *x, size_t i, float s, int32_t zp,
                            const qk_qparams *p)
{
    float lo = (float)(p->qmin - zp), hi = (float)(p->qmax - zp);
    float v = qt_load_xf(xk, x, i), q;
    if (qk == QK_Q_F16) q = qk_round_f16(qk_round_f16(v) / s);
    else if (qk == QK_Q_BF16) q = qk_round_bf16(qk_round_bf16(v) / s);
    else q = v / s;
    q = q > lo ? q : lo;
    q = q < hi ? q : hi;
    return (int32_t)qk_rint_small(q) + zp;
}

/* Element `slot` of packed data at y (element 0 of y[0] in the low bits). */
QT_INLINE void qt_put_packed(int yk, unsigned char *y, size_t slot, int32_t r)
{
    unsigned bits = yk == QK_Y_P4 ? 4u : 2u, per = 8u / bits;
    unsigned sh = (unsigned)(slot % per) * bits, m = (1u << bits) - 1u;
    unsigned char *b = y + slot / per;
    *b = (unsigned char)((*b & ~(m << sh)) | (((uint32_t)r & m) << sh));
}

QT_INLINE void qt_put1(int yk, unsigned char *y, unsigned phase, size_t i, int32_t r,
                       const qk_qparams *p)
{
    uint32_t u = (uint32_t)r;
    if (yk == QK_Y_B8) y[i] = (unsigned char)(u & p->mask);
    else if (yk == QK_Y_B16) { uint16_t h = (uint16_t)u; memcpy(y + 2 * i, &h, 2); }
    else qt_put_packed(yk, y, phase + i, r);
}

/* ---- quantize: one vector ---- */

/* Parameters of one vector step: broadcast (one scale) or per-element arrays. */
typedef struct qt_qvp {
    vf s, lo, hi;   /* scale; qmin - zp and qmax - zp as floats */
    vi zp;
#if QV_HAVE_FMA
    vf r;           /* RN(1 / s) */
    /* one positive scale only: x is clamped from above at QT_RK * s; qmin - zp and
     * qmax - zp as int32; qv_store4_lean's biased zero point, cap and flip */
    vf xl;
    vi loi, hii;
    vi zw, cap, flip;
    vi zi;   /* per element: zp - qmin, for qv_store4_lean after a pack */
    vi zs;   /* the zero point as int16 lanes, for QT_LEAN_SIGNED */
    int how; /* one scale, byte outputs: what qv_store4_lean does (QT_LEAN_*) */
#endif
} qt_qvp;

/* How qv_store4_lean turns int16 codes plus zero point into bytes. In general (FULL) the
 * zero point is biased by -qmin, packed with unsigned saturation, capped at qmax - qmin and
 * the sign bit of signed codes flipped. The full u8 range needs neither cap nor flip (NONE);
 * the full i8 range is a signed pack of codes plus the plain zero point (SIGNED). On Zen 4
 * the single-scale byte loop is bound by vector ops: the one or two saved of 28 per 64
 * elements are 7 % of its time. */
enum { QT_LEAN_NONE, QT_LEAN_SIGNED, QT_LEAN_FULL };

/* x as the quotient's numerator: widened, rounded to the quotient precision. */
QT_INLINE vf qt_numer(int xk, int qk, const void *x)
{
    vf v = qv_load_x(xk, x);
#if QV_HAVE_F16C
    if (qk == QK_Q_F16 && xk != QK_X_F16) v = qv_round_f16(v);
#endif
    if (qk == QK_Q_BF16 && xk != QK_X_BF16) v = qv_round_bf16(v);
    return v;
}

/* The quotient rounded to the quotient precision (float32: as it is). */
QT_INLINE vf qt_qround(int qk, vf q)
{
#if QV_HAVE_F16C
    if (qk == QK_Q_F16) q = qv_round_f16(q);
#endif
    if (qk == QK_Q_BF16) q = qv_round_bf16(q);
    return q;
}

#if QV_HAVE_FMA
/* q0 = RN(v r), e = v - q0 s exactly, q1 = RN(q0 + e r): rounds to the same integer as the
 * correctly rounded v / s (docs/EXACT-DIVISION.md). */
QT_INLINE vf qt_recip(vf v, vf s, vf r)
{
    vf q0 = qv_mul(v, r);
    return qv_fmadd(qv_fnmadd(q0, s, v), r, q0);
}

/* One positive scale. x at or above QT_RK * s gives a quotient at or above QT_RK, which
 * saturates like every larger one; what the clamp leaves unbounded is below: -inf, huge
 * negative quotients and NaN (which min passes through as its second operand) become
 * INT_MIN in the conversion, which the integer clamp (or qv_store4_lean's saturation) takes
 * to qmin, as docs/CONTRACT.md rule 3 wants. (A negative scale would need max instead of min:
 * such runs take the per-element form, qt_qvec.) */
QT_INLINE vi qt_qraw1(int xk, int qk, const void *x, const qt_qvp *v)
{
    vf n = qv_min(v->xl, qt_numer(xk, qk, x));
    vf q = qt_qround(qk, qt_recip(n, v->s, v->r));
    /* float16 rounds quotients from 65520 up to inf, which the conversion would take to
     * INT_MIN: bound them again (NaN passes as min's second operand) */
    if (qk == QK_Q_F16) q = qv_min(qv_set1(QT_RK), q);
    return qv_cvt(q);
}

/* The codes of qt_qraw1 (4-vector byte steps finish them in qv_store4_lean instead). */
QT_INLINE vi qt_qvec1(int xk, int qk, const void *x, const qt_qvp *v)
{
    vi c = qt_qraw1(xk, qk, x, v);
    return qv_add_i(qv_min_i(qv_max_i(c, v->loi), v->hii), v->zp);
}

/* 4 QV_W elements with one scale to y. */
QT_INLINE void qt_qstep4(int xk, int qk, int yk, const char *x, unsigned char *y,
                         const qt_qvp *v, vm mask, int how)
{
    size_t xs = qt_xsize(xk);
    if (yk == QK_Y_B16) {
        qv_store4(yk, y, qt_qvec1(xk, qk, x, v), qt_qvec1(xk, qk, x + QV_W * xs, v),
                  qt_qvec1(xk, qk, x + 2 * QV_W * xs, v), qt_qvec1(xk, qk, x + 3 * QV_W * xs, v),
                  mask);
    } else {
        (void)mask;
        qv_store4_lean(yk, y, qt_qraw1(xk, qk, x, v), qt_qraw1(xk, qk, x + QV_W * xs, v),
                       qt_qraw1(xk, qk, x + 2 * QV_W * xs, v),
                       qt_qraw1(xk, qk, x + 3 * QV_W * xs, v),
                       how == QT_LEAN_SIGNED ? v->zs : v->zw,
                       how == QT_LEAN_SIGNED ? v->zs : v->zw, v->cap, v->flip, how);
    }
}

/* Per-element parameters, whose signs differ, so x cannot be clamped on one side: q0 is
 * bounded above at QT_RK instead, which changes nothing up to there and leaves q1 beyond the
 * range (or inf) where x / s is; q1 is bounded at QT_RK again, so that only NaN and
 * quotients far below the range reach the conversion's INT_MIN. */
QT_INLINE vf qt_qfe(int xk, int qk, const void *x, vf s, vf r)
{
    vf n = qt_numer(xk, qk, x);
    vf q0 = qv_min(qv_mul(n, r), qv_set1(QT_RK));
    vf q = qt_qround(qk, qv_fmadd(qv_fnmadd(q0, s, n), r, q0));
    return qv_min(qv_set1(QT_RK), q);   /* NaN passes as min's second operand */
}

QT_INLINE vi qt_qrawe(int xk, int qk, const void *x, const qt_qvp *v)
{
    return qv_cvt(qt_qfe(xk, qk, x, v->s, v->r));
}

QT_INLINE vi qt_qvec(int xk, int qk, const void *x, const qt_qvp *v)
{
    vi c = qt_qrawe(xk, qk, x, v);
    return qv_add_i(qv_min_i(qv_max_i(c, v->loi), v->hii), v->zp);
}
#else
QT_INLINE vi qt_qvec(int xk, int qk, const void *x, const qt_qvp *v)
{
    vf q = qt_qround(qk, qv_div(qt_numer(xk, qk, x), v->s));   /* true division */
    q = qv_max(q, v->lo);  /* NaN -> lo: max returns its second operand */
    q = qv_min(q, v->hi);
    return qv_add_i(qv_cvt(q), v->zp);   /* |q| <= 65535: the conversion is exact RNE */
}
#define qt_qvec1 qt_qvec
QT_INLINE void qt_qstep4(int xk, int qk, int yk, const char *x, unsigned char *y,
                         const qt_qvp *v, vm mask, int how)
{
    size_t xs = qt_xsize(xk);
    vi r0 = qt_qvec(xk, qk, x, v);
    vi r1 = qt_qvec(xk, qk, x + QV_W * xs, v);
    vi r2 = qt_qvec(xk, qk, x + 2 * QV_W * xs, v);
    vi r3 = qt_qvec(xk, qk, x + 3 * QV_W * xs, v);
    (void)how;
    qv_store4(yk, y, r0, r1, r2, r3, mask);
}
#endif

/* Bytes of output for m elements (packed: m is a multiple of the elements per byte). */
QT_INLINE size_t qt_ybytes(int yk, size_t m)
{
    return yk == QK_Y_B8 ? m : yk == QK_Y_B16 ? 2 * m : yk == QK_Y_P4 ? m / 2 : m / 4;
}

/* r: the entry's reciprocal (FMA builds; ignored otherwise) */
QT_INLINE qt_qvp qt_qvp_single(float s, float r, int32_t zp, const qk_qparams *p)
{
    qt_qvp v;
    v.s = qv_set1(s);
    v.lo = qv_set1((float)(p->qmin - zp));
    v.hi = qv_set1((float)(p->qmax - zp));
    v.zp = qv_set1_i(zp);
#if QV_HAVE_FMA
    v.r = qv_set1(r);
    v.xl = qv_set1(QT_RK * s);   /* exact: a power of two times a normal scale */
    v.loi = qv_set1_i(p->qmin - zp);
    v.hii = qv_set1_i(p->qmax - zp);
    /* byte kinds only (|qmin|, |qmax| <= 255): every value below fits int16 */
    v.zw = qv_set1_w(zp - p->qmin);
    v.cap = qv_set1_b(p->qmax - p->qmin);
    v.flip = qv_set1_b((int)((uint32_t)-p->qmin & p->mask));
    v.zs = qv_set1_w(zp);
    v.how = p->qmax - p->qmin != 255 ? QT_LEAN_FULL : p->qmin ? QT_LEAN_SIGNED : QT_LEAN_NONE;
#else
    (void)r;
#endif
    return v;
}

/* rp: reciprocals (FMA builds; ignored otherwise) */
QT_INLINE qt_qvp qt_qvp_load(const float *s, const float *rp, const int32_t *zp,
                             const qk_qparams *p)
{
    qt_qvp v;
    v.s = qv_loadu_f(s);
    v.zp = zp ? qv_loadu_i(zp) : qv_set1_i(0);
    v.lo = qv_cvt_i2f(qv_sub_i(qv_set1_i(p->qmin), v.zp));   /* exact: |.| < 2^17 */
    v.hi = qv_cvt_i2f(qv_sub_i(qv_set1_i(p->qmax), v.zp));
#if QV_HAVE_FMA
    v.r = qv_loadu_f(rp);
    v.loi = qv_sub_i(qv_set1_i(p->qmin), v.zp);
    v.hii = qv_sub_i(qv_set1_i(p->qmax), v.zp);
    v.zi = qv_sub_i(v.zp, qv_set1_i(p->qmin));
#else
    (void)rp;
#endif
    return v;
}

/* One entry's parameters broadcast (per-element form, blocks of whole vectors). */
QT_INLINE qt_qvp qt_qvp_bc(float s, float r, int32_t zp, const qk_qparams *p)
{
    qt_qvp v;
    v.s = qv_set1(s);
    v.zp = qv_set1_i(zp);
    v.lo = qv_set1((float)(p->qmin - zp));
    v.hi = qv_set1((float)(p->qmax - zp));
#if QV_HAVE_FMA
    v.r = qv_set1(r);
    v.loi = qv_set1_i(p->qmin - zp);
    v.hii = qv_set1_i(p->qmax - zp);
    v.zi = qv_set1_i(zp - p->qmin);
#else
    (void)r;
#endif
    return v;
}

/* Where the per-element form takes each vector's parameters: arrays with one value per
 * element (per == 0, lg == 0); with FMA, one entry per 2^lg elements (lg = 1..3, entries
 * repeated across the lanes); or one entry per `per` whole vectors, broadcast (e: the entry
 * of the next vector, left: its vectors still to come). Vectors are taken in order. */
typedef struct qt_psrc {
    const float *s, *r;
    const int32_t *z;
    size_t per, e, left;
    unsigned lg;
} qt_psrc;

QT_INLINE qt_qvp qt_pnext(qt_psrc *ps, size_t i, const qk_qparams *p)
{
#if QV_HAVE_FMA
    if (ps->lg) {
        qt_qvp v;
        size_t k = i >> ps->lg;
        v.s = qv_rep_f(ps->s + k, ps->lg);
        v.r = qv_rep_f(ps->r + k, ps->lg);
        v.zp = ps->z ? qv_rep_i(ps->z + k, ps->lg) : qv_set1_i(0);
        v.lo = v.hi = v.s;   /* (the division form's clamps are not used with FMA) */
        v.loi = qv_sub_i(qv_set1_i(p->qmin), v.zp);
        v.hii = qv_sub_i(qv_set1_i(p->qmax), v.zp);
        v.zi = qv_sub_i(v.zp, qv_set1_i(p->qmin));
        return v;
    }
#endif
    if (!ps->per) return qt_qvp_load(ps->s + i, ps->r + i, ps->z ? ps->z + i : NULL, p);
    if (!ps->left) {
        ps->e++;
        ps->left = ps->per;
    }
    ps->left--;
    return qt_qvp_bc(ps->s[ps->e], ps->r[ps->e], ps->z ? ps->z[ps->e] : 0, p);
}

/* m (< QV_W) elements through stack buffers, so that nothing outside the run is touched. */
QT_COLD void qt_qpartial(int xk, int qk, int yk, const char *x, unsigned char *y, size_t m,
                           qt_qvp v, vm mask, int single)
{
    unsigned char xb[4 * QV_W], yb[2 * QV_W];
    memset(xb, 0, sizeof xb);
    memcpy(xb, x, m * qt_xsize(xk));
    qv_store1(yk, yb, single ? qt_qvec1(xk, qk, xb, &v) : qt_qvec(xk, qk, xb, &v), mask);
    memcpy(y, yb, qt_ybytes(yk, m));
}

/* m elements at x / y with one scale (packed: y[0] starts with element 0). */
QT_INLINE void qt_qvec_single_c(int xk, int qk, int yk, const char *x, unsigned char *y,
                                size_t m, qt_qvp v, vm mask)
{
    size_t xs = qt_xsize(xk), i = 0;
#if QV_HAVE_FMA
    /* float32 x to u8 / i8: loops without the general byte steps' cap and flip */
    if (yk == QK_Y_B8 && qk == QK_Q_F32 && xk == QK_X_F32 && v.how != QT_LEAN_FULL) {
        if (v.how == QT_LEAN_NONE)
            for (; m - i >= QT_U; i += QT_U)
                qt_qstep4(xk, qk, yk, x + i * xs, y + i, &v, mask, QT_LEAN_NONE);
        else
            for (; m - i >= QT_U; i += QT_U)
                qt_qstep4(xk, qk, yk, x + i * xs, y + i, &v, mask, QT_LEAN_SIGNED);
    }
#endif
    for (; m - i >= QT_U; i += QT_U)
        qt_qstep4(xk, qk, yk, x + i * xs, y + qt_ybytes(yk, i), &v, mask, QT_LEAN_FULL);
    /* the last vectors; a partial one as a full vector ending at m when it may overlap
     * (whole bytes too: m and QV_W are multiples of the per-byte count), else partial */
    while (i < m) {
        size_t j = i;
        if (m - i < QV_W) {
            if (m < QV_W || !qt_disjoint(x, m * xs, y, qt_ybytes(yk, m))) {
                qt_qpartial(xk, qk, yk, x + i * xs, y + qt_ybytes(yk, i), m - i, v, mask, 1);
                break;
            }
            j = m - QV_W;
        }
        qv_store1(yk, y + qt_ybytes(yk, j), qt_qvec1(xk, qk, x + j * xs, &v), mask);
        i = j + QV_W;
    }
}

/* Elements per output byte count: m elements of kind yk take qt_ybytes(yk, m) bytes. */
QT_INLINE size_t qt_yelems(int yk, size_t bytes)
{
    return yk == QK_Y_B8 ? bytes : yk == QK_Y_B16 ? bytes / 2 : yk == QK_Y_P4 ? 2 * bytes
                                                                              : 4 * bytes;
}

/* m elements with one scale; with stream (and a long enough disjoint run), the
 * cache-line-aligned middle [nt0, nt1) by non-temporal stores, the rest as usual. */
QT_INLINE void qt_qvec_single(int xk, int qk, int yk, const char *x, unsigned char *y,
                              size_t m, qt_qvp v, vm mask, int stream)
{
    size_t xs = qt_xsize(xk), xb = m * xs, yb = qt_ybytes(yk, m - m % 4);
    size_t line = qt_yelems(yk, QT_NT_LINE), nt0 = m, nt1 = m, a = 0, b;
    if (stream && yb >= QT_NT_MIN && (yk != QK_Y_B16 || (uintptr_t)y % 2 == 0) &&
        qt_disjoint(x, xb, y, yb)) {
        nt0 = qt_yelems(yk, (64 - ((uintptr_t)y & 63)) & 63);   /* to a line boundary */
        nt1 = nt0 + (m - nt0) / line * line;
    }
    /* one call site of qt_qvec_single_c (one inlined copy): [0, nt0), then [nt1, m) */
    for (b = nt0;; b = m) {
        qt_qvec_single_c(xk, qk, yk, x + a * xs, y + qt_ybytes(yk, a), b - a, v, mask);
        if (b >= m) break;
        union { vi v[QT_NT_LINE / sizeof(vi)]; unsigned char b[QT_NT_LINE]; } buf;
        for (a = b; a < nt1; a += line) {
            for (size_t k = 0; k < line; k += QT_U)
                qt_qstep4(xk, qk, yk, x + (a + k) * xs, buf.b + qt_ybytes(yk, k), &v, mask,
                          QT_LEAN_FULL);
            for (size_t k = 0; k < QT_NT_LINE; k += 64)
                qv_stream64(y + qt_ybytes(yk, a) + k, buf.b + k);
        }
    }
}

/* Elements [a, b) one at a time (packed: read-modify-write of their bytes). */
QT_COLD void qt_qelems(int xk, int qk, int yk, const char *x, unsigned char *y, size_t a,
                       size_t b, size_t blk, const qk_qparams *p)
{
    for (size_t i = a; i < b; i++)
        qt_put1(yk, y, p->phase, i,
                qt_quant1(xk, qk, x, i, p->scale[i / blk], p->zp ? p->zp[i / blk] : 0, p), p);
}

/* For packed outputs, [a, b) is split into a head and a tail that share their bytes with
 * elements outside the range, done one at a time, and the rest, which starts on a byte
 * boundary and fills whole bytes. The head is done here; *pa and *pb are moved to the
 * rest, and the caller does [*pb, b) after the rest (in this order, the run's elements are
 * done in memory order, so exactly in-place use stays correct). Returns the rest's first
 * byte. */
QT_INLINE unsigned char *qt_qsplit(int xk, int qk, int yk, const char *x, unsigned char *y,
                                   size_t *pa, size_t *pb, size_t blk, const qk_qparams *p)
{
    size_t a = *pa, b = *pb;
    if (yk != QK_Y_P4 && yk != QK_Y_P2) return y + qt_ybytes(yk, a);
    unsigned per = yk == QK_Y_P4 ? 2u : 4u, phase = p->phase;
    size_t head = (per - (phase + a) % per) % per;
    if (head > b - a) head = b - a;
    if (head) qt_qelems(xk, qk, yk, x, y, a, a + head, blk, p);
    *pa = a + head;
    *pb = b - (b - a - head) % per;
    return y + (phase + a + head) / per;
}

/* Elements [a, b) of the run, all of parameter entry e (= a / blk). */
QT_INLINE void qt_quant_single(int xk, int qk, int yk, const char *x, unsigned char *y,
                               size_t a, size_t b, size_t e, size_t blk, const qk_qparams *p)
{
    float s = p->scale[e];
    int32_t zp = p->zp ? p->zp[e] : 0;
    unsigned char *ya;
    size_t end = b;
    if (yk == QK_Y_P4 || yk == QK_Y_P2) {
        unsigned per = yk == QK_Y_P4 ? 2u : 4u;
        if ((p->phase + a) % per == 0 && (b - a) % per == 0) ya = y + (p->phase + a) / per;
        else ya = qt_qsplit(xk, qk, yk, x, y, &a, &b, blk, p);
    } else {
        ya = y + qt_ybytes(yk, a);
    }
    if (a < b)
        qt_qvec_single(xk, qk, yk, x + a * qt_xsize(xk), ya, b - a,
                       qt_qvp_single(s, p->rscale ? p->rscale[e] : 0.0f, zp, p),
                       qv_mask(p->mask), p->stream);
    if (b < end) qt_qelems(xk, qk, yk, x, y, b, end, blk, p);
}

/* m (a multiple of QV_W) elements with per-element parameters sp / zpp (NULL: zero). */
QT_INLINE void qt_qvec_perelem(int xk, int qk, int yk, const char *x, unsigned char *y,
                               size_t m, qt_psrc *ps, const qk_qparams *p, vm mask)
{
    size_t xs = qt_xsize(xk), i = 0;
#if QV_HAVE_FMA
    vi cap = qv_set1_b(p->qmax - p->qmin);
    vi flip = qv_set1_b((int)((uint32_t)-p->qmin & p->mask));
#endif
    for (; m - i >= QT_U; i += QT_U) {
        const char *xi = x + i * xs;
        qt_qvp v0 = qt_pnext(ps, i, p);
        qt_qvp v1 = qt_pnext(ps, i + QV_W, p);
        qt_qvp v2 = qt_pnext(ps, i + 2 * QV_W, p);
        qt_qvp v3 = qt_pnext(ps, i + 3 * QV_W, p);
#if QV_HAVE_FMA
        if (yk != QK_Y_B16) {   /* the zero points packed to int16 lanes as the codes will be */
            qv_store4_lean(yk, y + qt_ybytes(yk, i), qt_qrawe(xk, qk, xi, &v0),
                           qt_qrawe(xk, qk, xi + QV_W * xs, &v1),
                           qt_qrawe(xk, qk, xi + 2 * QV_W * xs, &v2),
                           qt_qrawe(xk, qk, xi + 3 * QV_W * xs, &v3), qv_pack_w(v0.zi, v1.zi),
                           qv_pack_w(v2.zi, v3.zi), cap, flip, QT_LEAN_FULL);
            continue;
        }
#endif
        vi r0 = qt_qvec(xk, qk, xi, &v0);
        vi r1 = qt_qvec(xk, qk, xi + QV_W * xs, &v1);
        vi r2 = qt_qvec(xk, qk, xi + 2 * QV_W * xs, &v2);
        vi r3 = qt_qvec(xk, qk, xi + 3 * QV_W * xs, &v3);
        qv_store4(yk, y + qt_ybytes(yk, i), r0, r1, r2, r3, mask);
    }
    for (; i < m; i += QV_W) {
        qt_qvp v = qt_pnext(ps, i, p);
        qv_store1(yk, y + qt_ybytes(yk, i), qt_qvec(xk, qk, x + i * xs, &v), mask);
    }
}

/* The whole run with one parameter entry per blk (QT_PERELEM) elements. blk == 1 reads the
 * parameter arrays directly; other sizes are expanded per element into a stack buffer,
 * QT_EXP elements at a time (filled well before it is read back as vectors). */
QT_INLINE void qt_quant_perelem(int xk, int qk, int yk, const char *x, unsigned char *y,
                                size_t n, size_t blk, const qk_qparams *p)
{
    size_t xs = qt_xsize(xk), a = 0, b = n, i;
    unsigned char *ya = qt_qsplit(xk, qk, yk, x, y, &a, &b, blk, p);
    vm mask = qv_mask(p->mask);
    float sb[QT_EXP + QV_W], rb[QV_HAVE_FMA ? QT_EXP + QV_W : 1];
    int32_t zb[QT_EXP + QV_W];
    /* without FMA the reciprocals are never read: any valid pointer will do */
    const float *rp = QV_HAVE_FMA ? p->rscale : p->scale;
    /* blocks of whole vectors, starting on a vector: each vector broadcasts its entry; with
     * FMA, blocks of 2, 4 or 8 starting on a vector repeat their entries across the lanes */
    int bc = blk % QV_W == 0 && a % QV_W == 0;
    unsigned lg = !bc && QV_HAVE_FMA && a % QV_W == 0 ? (blk == 2 ? 1u : blk == 4 ? 2u
                                                        : blk == 8 ? 3u : 0u) : 0u;
    float st[2 * QV_W], rt[2 * QV_W];
    int32_t zt[2 * QV_W];
    for (i = a; i < b;) {
        size_t m = b - i;
        qt_psrc ps;
        ps.per = ps.e = ps.left = 0;
        ps.lg = 0;
        if (m < QV_W) {
            /* fewer than QV_W left: a last full vector if it may overlap, else partial; its
             * parameters expanded (padding lanes never stored). One call site of
             * qt_qvec_perelem for both keeps one inlined copy. */
            size_t t = b - a >= QV_W && qt_disjoint(x + a * xs, (b - a) * xs, ya,
                                                     qt_ybytes(yk, b - a)) ? b - QV_W : i;
            qt_expand(p->scale, p->zp, blk, t, b - t, st, zt);
            qt_expand_f(rp, blk, t, b - t, rt);
            for (size_t k = b - t; k < QV_W; k++) {
                st[k] = 1.0f;
                rt[k] = 1.0f;
                zt[k] = 0;
            }
            if (b - t < QV_W) {
                qt_qpartial(xk, qk, yk, x + t * xs, ya + qt_ybytes(yk, t - a), b - t,
                            qt_qvp_load(st, rt, zt, p), mask, 0);
                break;
            }
            ps.s = st;
            ps.r = rt;
            ps.z = zt;
            i = t;
            m = QV_W;
        } else if (lg) {   /* i is a multiple of QV_W, so of blk */
            ps.s = p->scale + i / blk;
            ps.r = rp + i / blk;
            ps.z = p->zp ? p->zp + i / blk : NULL;
            ps.lg = lg;
        } else if (bc) {
            ps.s = p->scale;
            ps.r = rp;
            ps.z = p->zp;
            ps.per = blk / QV_W;
            ps.e = i / blk;
            ps.left = (blk - i % blk) / QV_W;
        } else if (blk == 1) {
            ps.s = p->scale + i;
            ps.r = rp + i;
            ps.z = p->zp ? p->zp + i : NULL;
        } else {
            m = m < QT_EXP ? m : QT_EXP;
            qt_expand(p->scale, p->zp, blk, i, m, sb, zb);
            if (QV_HAVE_FMA) qt_expand_f(rp, blk, i, m, rb);
            ps.s = sb;
            ps.r = QV_HAVE_FMA ? rb : sb;
            ps.z = zb;
        }
        m -= m % QV_W;
        qt_qvec_perelem(xk, qk, yk, x + i * xs, ya + qt_ybytes(yk, i - a), m, &ps, p, mask);
        i += m;
    }
    if (b < n) qt_qelems(xk, qk, yk, x, y, b, n, blk, p);
}

QT_INLINE void qt_quant_run(int xk, int qk, int yk, const void *xv, void *yv, size_t n,
                            const qk_qparams *p)
{
    const char *x = (const char *)xv;
    unsigned char *y = (unsigned char *)yv;
    size_t blk = p->blk ? p->blk : 1, xs = qt_xsize(xk);
    unsigned per = yk == QK_Y_P4 ? 2u : yk == QK_Y_P2 ? 4u : 1u;
    (void)xs;
    (void)per;
    if (n == 0) return;
#if QV_HAVE_FMA
    /* the per-element form for a negative scale: its entry repeated QT_EXP times */
    float cs[QT_EXP], cr[QT_EXP];
    int32_t cz[QT_EXP];
    size_t ce = (size_t)-1;
    qk_qparams pc;
    if (!p->rscale) {   /* some scale outside the reciprocal form's range: divide */
        qk_quant_scalar(xk, qk, yk, xv, yv, n, p);
        return;
    }
#endif
    /* One call site per inlined driver keeps one copy of each in the table entry. */
    for (size_t a = 0; a < n;) {
        /* [a, b): the rest of entry e's elements (a is mid-entry after a chunk of a negative
         * scale's elements: the end is the entry's, not a + blk) */
        size_t e = a / blk, b = n - e * blk <= blk ? n : (e + 1) * blk;
        const qk_qparams *pp = p;
        const char *px = x;
        unsigned char *py = y;
        size_t pblk = blk;
        int pe = QT_PERELEM(blk);   /* (streaming stores measured no faster here) */
        if (pe) b = n;
#if QV_HAVE_FMA
        else if (p->scale[e] < 0.0f) {
            if (b - a > QT_EXP) b = a + QT_EXP;   /* a multiple of 4: whole packed bytes */
            if (ce != e) {
                for (size_t k = 0; k < QT_EXP; k++) {
                    cs[k] = p->scale[e];
                    cr[k] = p->rscale[e];
                    cz[k] = p->zp ? p->zp[e] : 0;
                }
                pc = *p;
                pc.scale = cs;
                pc.rscale = cr;
                pc.zp = cz;
                pc.blk = 1;
                ce = e;
            }
            pc.phase = (unsigned)((p->phase + a) % per);
            pp = &pc;
            px = x + a * xs;
            py = y + (per > 1 ? (p->phase + a) / per : qt_ybytes(yk, a));
            pblk = 1;
            pe = 1;
        }
#endif
        if (pe) qt_quant_perelem(xk, qk, yk, px, py, b - a, pblk, pp);
        else qt_quant_single(xk, qk, yk, x, y, a, b, e, blk, p);
        a = b;
    }
}

/* ---- dequantize ---- */

/* Bytes of input for m elements (packed: m a multiple of the elements per byte). */
QT_INLINE size_t qt_xbytes(int dk, size_t m)
{
    return dk == QK_D_B8 ? m : dk == QK_D_B16 ? 2 * m : dk == QK_D_P4 ? m / 2 : m / 4;
}

QT_INLINE size_t qt_osize(int ok) { return ok == QK_O_F32 ? 4u : 2u; }

/* Code of element i (slot phase + i for packed input), as scalar.c's load_code. */
QT_INLINE int32_t qt_code1(int dk, unsigned bits, int sgn, const unsigned char *x,
                           unsigned phase, size_t i)
{
    uint32_t c;
    if (dk == QK_D_B16) {
        uint16_t h;
        memcpy(&h, x + 2 * i, 2);
        return sgn ? (int32_t)(int16_t)h : (int32_t)h;
    }
    if (dk == QK_D_B8) {
        if (bits >= 8) return sgn ? (int32_t)(int8_t)x[i] : (int32_t)x[i];
        c = x[i] & ((1u << bits) - 1u);
    } else {
        unsigned b = dk == QK_D_P4 ? 4u : 2u, per = 8u / b;
        size_t slot = phase + i;
        bits = b;
        c = (x[slot / per] >> ((slot % per) * b)) & ((1u << b) - 1u);
    }
    return sgn ? (int32_t)c - (int32_t)((c << 1) & (1u << bits)) : (int32_t)c;
}

QT_INLINE void qt_out1(int ok, unsigned char *y, size_t i, float v)
{
    if (ok == QK_O_F32) memcpy(y + 4 * i, &v, 4);
    else {
        uint16_t h = ok == QK_O_F16 ? qk_f32_to_f16(v) : qk_f32_to_bf16(v);
        memcpy(y + 2 * i, &h, 2);
    }
}

QT_INLINE void qt_deq1(int dk, int ok, unsigned bits, int sgn, const unsigned char *x,
                       unsigned char *y, unsigned phase, size_t i, float s, int32_t zp)
{
    qt_out1(ok, y, i, (float)(qt_code1(dk, bits, sgn, x, phase, i) - zp) * s);
}

QT_INLINE void qt_dvec(int dk, int ok, unsigned bits, int sgn, const unsigned char *x,
                       unsigned char *y, vf s, vi zp)
{
    vi c = qv_load_codes(dk, bits, sgn, x);
    /* |c - zp| < 2^17: exact in int32 and in the float conversion; one rounding in the
     * product, which is never fused */
    qv_store_out(ok, y, qv_mul(qv_cvt_i2f(qv_sub_i(c, zp)), s));
}

QT_COLD void qt_dpartial(int dk, int ok, unsigned bits, int sgn, const unsigned char *x,
                           unsigned char *y, size_t m, vf s, vi zp)
{
    unsigned char xb[2 * QV_W], yb[4 * QV_W];
    memset(xb, 0, sizeof xb);
    memcpy(xb, x, qt_xbytes(dk, m));
    qt_dvec(dk, ok, bits, sgn, xb, yb, s, zp);
    memcpy(y, yb, m * qt_osize(ok));
}

/* For packed input: does the elements of [a, b) that share a byte with elements outside it
 * one at a time and narrows [a, b) to the rest. Returns the byte of element a. */
QT_COLD const unsigned char *qt_dsplit(int dk, int ok, unsigned bits, int sgn,
                                         const unsigned char *x, unsigned char *y,
                                         size_t *pa, size_t *pb, size_t blk,
                                         const qk_dparams *p)
{
    size_t a = *pa, b = *pb;
    if (dk != QK_D_P4 && dk != QK_D_P2) return x + qt_xbytes(dk, a);
    unsigned per = dk == QK_D_P4 ? 2u : 4u, phase = p->phase;
    size_t head = (per - (phase + a) % per) % per;
    if (head > b - a) head = b - a;
    size_t tail = (b - a - head) % per;
    for (size_t i = a; i < a + head; i++)
        qt_deq1(dk, ok, bits, sgn, x, y, phase, i, p->scale[i / blk],
                p->zp ? p->zp[i / blk] : 0);
    for (size_t i = b - tail; i < b; i++)
        qt_deq1(dk, ok, bits, sgn, x, y, phase, i, p->scale[i / blk],
                p->zp ? p->zp[i / blk] : 0);
    *pa = a + head;
    *pb = b - tail;
    return x + (phase + a + head) / per;
}

/* Elements [a, b) of the run, all of parameter entry e (= a / blk). */
QT_INLINE void qt_deq_single(int dk, int ok, unsigned bits, int sgn, const unsigned char *x,
                             unsigned char *y, size_t a, size_t b, size_t e, size_t blk,
                             const qk_dparams *p)
{
    size_t os = qt_osize(ok);
    const unsigned char *xa;
    if (dk == QK_D_P4 || dk == QK_D_P2) {
        unsigned per = dk == QK_D_P4 ? 2u : 4u;
        if ((p->phase + a) % per == 0 && (b - a) % per == 0) xa = x + (p->phase + a) / per;
        else xa = qt_dsplit(dk, ok, bits, sgn, x, y, &a, &b, blk, p);
    } else {
        xa = x + qt_xbytes(dk, a);
    }
    if (a >= b) return;
    size_t m = b - a, i = 0;
    unsigned char *ya = y + a * os;
    vf s = qv_set1(p->scale[e]);
    vi zp = qv_set1_i(p->zp ? p->zp[e] : 0);
    /* elements to the first cache line of y; packed input must then start on a byte */
    size_t head = ((64 - ((uintptr_t)ya & 63)) & 63) / os;
    if (p->stream && m * os >= QT_NT_MIN && (uintptr_t)ya % os == 0 && head % 4 == 0 &&
        qt_disjoint(xa, qt_xbytes(dk, m), ya, m * os)) {
        /* non-temporal stores for the middle, as qt_qvec_single_nt */
        size_t line = QT_NT_LINE / os;
        union { vf v[QT_NT_LINE / sizeof(vf)]; unsigned char b[QT_NT_LINE]; } buf;
        for (; i < head; i++)
            qt_deq1(dk, ok, bits, sgn, xa, ya, 0, i, p->scale[e], p->zp ? p->zp[e] : 0);
        for (; m - i >= line; i += line) {
            for (size_t k = 0; k < line; k += QV_W)
                qt_dvec(dk, ok, bits, sgn, xa + qt_xbytes(dk, i + k), buf.b + k * os, s, zp);
            for (size_t k = 0; k < QT_NT_LINE; k += 64)
                qv_stream64(ya + i * os + k, buf.b + k);
        }
    } else if (QV_W >= 8 && os == 4 && (dk == QK_D_B8 || dk == QK_D_B16) && head &&
               m >= QT_DALIGN_MIN && qt_disjoint(xa, qt_xbytes(dk, m), ya, m * os)) {
        /* whole vectors from ya past the head (< 16), which the aligned ones rewrite alike */
        for (; i < head; i += QV_W)
            qt_dvec(dk, ok, bits, sgn, xa + qt_xbytes(dk, i), ya + i * os, s, zp);
        i = head;
    }
    for (; m - i >= QT_U; i += QT_U) {
        qt_dvec(dk, ok, bits, sgn, xa + qt_xbytes(dk, i), ya + i * os, s, zp);
        qt_dvec(dk, ok, bits, sgn, xa + qt_xbytes(dk, i + QV_W), ya + (i + QV_W) * os, s, zp);
        qt_dvec(dk, ok, bits, sgn, xa + qt_xbytes(dk, i + 2 * QV_W), ya + (i + 2 * QV_W) * os,
                s, zp);
        qt_dvec(dk, ok, bits, sgn, xa + qt_xbytes(dk, i + 3 * QV_W), ya + (i + 3 * QV_W) * os,
                s, zp);
    }
    /* the last vectors; a partial one as a full vector ending at m when it may overlap
     * (whole bytes too: m and QV_W are multiples of the per-byte count), else partial */
    while (i < m) {
        size_t j = i;
        if (m - i < QV_W) {
            if (m < QV_W || !qt_disjoint(xa, qt_xbytes(dk, m), ya, m * os)) {
                qt_dpartial(dk, ok, bits, sgn, xa + qt_xbytes(dk, i), ya + i * os, m - i, s, zp);
                break;
            }
            j = m - QV_W;
        }
        qt_dvec(dk, ok, bits, sgn, xa + qt_xbytes(dk, j), ya + j * os, s, zp);
        i = j + QV_W;
    }
}

/* m (a multiple of QV_W) elements with per-element parameters sp / zpp (NULL: zero). */
QT_INLINE void qt_dvec_perelem(int dk, int ok, unsigned bits, int sgn, const unsigned char *x,
                               unsigned char *y, size_t m, const float *sp, const int32_t *zpp)
{
    size_t os = qt_osize(ok);
    for (size_t i = 0; i < m; i += QV_W)
        qt_dvec(dk, ok, bits, sgn, x + qt_xbytes(dk, i), y + i * os, qv_loadu_f(sp + i),
                zpp ? qv_loadu_i(zpp + i) : qv_set1_i(0));
}

/* The whole run with one parameter entry per blk (< QV_W) elements, as qt_quant_perelem. */
QT_INLINE void qt_deq_perelem(int dk, int ok, unsigned bits, int sgn, const unsigned char *x,
                              unsigned char *y, size_t n, size_t blk, const qk_dparams *p)
{
    size_t a = 0, b = n, os = qt_osize(ok), i;
    const unsigned char *xa = qt_dsplit(dk, ok, bits, sgn, x, y, &a, &b, blk, p);
    float sb[QT_EXP + QV_W];
    int32_t zb[QT_EXP + QV_W];
    for (i = a; b - i >= QV_W;) {
        size_t m = b - i < QT_EXP ? b - i : QT_EXP;
        m -= m % QV_W;
        const float *sp = p->scale + i;
        const int32_t *zpp = p->zp ? p->zp + i : NULL;
        if (blk != 1) {
            qt_expand(p->scale, p->zp, blk, i, m, sb, zb);
            sp = sb;
            zpp = zb;
        }
        qt_dvec_perelem(dk, ok, bits, sgn, xa + qt_xbytes(dk, i - a), y + i * os, m, sp, zpp);
        i += m;
    }
    if (i < b) {   /* fewer than QV_W left: a last full vector if it may overlap, else partial */
        float st[2 * QV_W];
        int32_t zt[2 * QV_W];
        size_t t = b - a >= QV_W && qt_disjoint(xa, qt_xbytes(dk, b - a), y + a * os,
                                                 (b - a) * os) ? b - QV_W : i;
        qt_expand(p->scale, p->zp, blk, t, b - t, st, zt);
        for (size_t k = b - t; k < QV_W; k++) {
            st[k] = 1.0f;
            zt[k] = 0;
        }
        const unsigned char *xt = xa + qt_xbytes(dk, t - a);
        if (b - t == QV_W)
            qt_dvec(dk, ok, bits, sgn, xt, y + t * os, qv_loadu_f(st), qv_loadu_i(zt));
        else
            qt_dpartial(dk, ok, bits, sgn, xt, y + t * os, b - t, qv_loadu_f(st), qv_loadu_i(zt));
    }
}

QT_INLINE void qt_deq_run2(int dk, int ok, unsigned bits, int sgn, const void *xv, void *yv,
                           size_t n, const qk_dparams *p)
{
    const unsigned char *x = (const unsigned char *)xv;
    unsigned char *y = (unsigned char *)yv;
    size_t blk = p->blk ? p->blk : 1;
    if (blk >= QV_W || blk >= n) {   /* (one call site: one inlined copy) */
        for (size_t a = 0, e = 0; a < n; a += blk, e++)
            qt_deq_single(dk, ok, bits, sgn, x, y, a, n - a < blk ? n : a + blk, e, blk, p);
    } else {
        qt_deq_perelem(dk, ok, bits, sgn, x, y, n, blk, p);
    }
}

/* One specialised loop per (bits, signedness), chosen once per run. */
QT_INLINE void qt_deq_run(int dk, int ok, const void *x, void *y, size_t n, const qk_dparams *p)
{
    if (n == 0) return;
    int sgn = p->is_signed != 0;
    if (dk == QK_D_B8) {
        unsigned bits = p->bits >= 8 ? 8u : p->bits;
        if (bits == 8) {
            if (sgn) qt_deq_run2(dk, ok, 8, 1, x, y, n, p);
            else qt_deq_run2(dk, ok, 8, 0, x, y, n, p);
        } else if (bits == 4 || bits == 2) {   /* (bits not a constant: one loop for both) */
            if (sgn) qt_deq_run2(dk, ok, bits, 1, x, y, n, p);
            else qt_deq_run2(dk, ok, bits, 0, x, y, n, p);
        } else {
            qk_dequant_scalar(dk, ok, x, y, n, p);   /* not produced by the operators */
        }
        return;
    }
    unsigned bits = dk == QK_D_B16 ? 16u : dk == QK_D_P4 ? 4u : 2u;
    if (sgn) qt_deq_run2(dk, ok, bits, 1, x, y, n, p);
    else qt_deq_run2(dk, ok, bits, 0, x, y, n, p);
}

/* ---- NaN-ignoring min / max ---- */

/* Sign of the first element equal to zero (the scalar loop keeps the first of equal values,
 * and +0 / -0 are the only equal values with different bits). */
static int qt_first_zero_negative(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] == 0.0f) return (int)(qk_f32_bits(x[i]) >> 31);
    return 0;
}

/* Folds candidate values (lane accumulators, leftover elements) into the scalar result. */
static float qt_reduce(const float *c, size_t nc, int is_max, const float *x, size_t n)
{
    float r = is_max ? -INFINITY : INFINITY;
    int pos = 0, neg = 0;
    for (size_t k = 0; k < nc; k++)
        if (is_max ? c[k] > r : c[k] < r) r = c[k];
    if (r != 0.0f) return r;   /* equal nonzero floats have equal bits */
    for (size_t k = 0; k < nc; k++)
        if (c[k] == 0.0f) { if (qk_f32_bits(c[k]) >> 31) neg = 1; else pos = 1; }
    if (pos && neg) neg = qt_first_zero_negative(x, n);
    return neg ? -0.0f : 0.0f;
}

static void QT_N(minmax)(const float *x, size_t n, float *mn, float *mx)
{
    /* Per lane, min(v, acc) is exactly `v < acc ? v : acc` (x86 returns the second operand
     * for NaN and for equal values), so each lane keeps the first occurrence of its minimum,
     * as the scalar loop does. */
    vf lo0 = qv_set1(INFINITY), lo1 = lo0, lo2 = lo0, lo3 = lo0;
    vf hi0 = qv_set1(-INFINITY), hi1 = hi0, hi2 = hi0, hi3 = hi0;
    size_t i = 0;
    for (; n - i >= QT_U; i += QT_U) {
        vf v0 = qv_loadu_f(x + i), v1 = qv_loadu_f(x + i + QV_W);
        vf v2 = qv_loadu_f(x + i + 2 * QV_W), v3 = qv_loadu_f(x + i + 3 * QV_W);
        lo0 = qv_min(v0, lo0); hi0 = qv_max(v0, hi0);
        lo1 = qv_min(v1, lo1); hi1 = qv_max(v1, hi1);
        lo2 = qv_min(v2, lo2); hi2 = qv_max(v2, hi2);
        lo3 = qv_min(v3, lo3); hi3 = qv_max(v3, hi3);
    }
    for (; n - i >= QV_W; i += QV_W) {
        vf v = qv_loadu_f(x + i);
        lo0 = qv_min(v, lo0);
        hi0 = qv_max(v, hi0);
    }
    /* Fast fold (per-row callers pay for it once per row): the lanes combined, then a tree
     * over the lanes. The accumulators hold no NaN, so a nonzero result is the one value
     * the scalar loop finds; a zero result needs the sign rule below, from the lanes kept
     * apart. */
    float tl[QV_W], th[QV_W], a, b;
    float l0 = INFINITY, l1 = INFINITY, l2 = INFINITY, l3 = INFINITY;
    float h0 = -INFINITY, h1 = -INFINITY, h2 = -INFINITY, h3 = -INFINITY;
    size_t k;
    qv_storeu_f(tl, qv_min(qv_min(lo0, lo1), qv_min(lo2, lo3)));
    qv_storeu_f(th, qv_max(qv_max(hi0, hi1), qv_max(hi2, hi3)));
    for (k = 0; k < QV_W; k += 4) {   /* eight independent chains, in registers */
        l0 = tl[k] < l0 ? tl[k] : l0; l1 = tl[k + 1] < l1 ? tl[k + 1] : l1;
        l2 = tl[k + 2] < l2 ? tl[k + 2] : l2; l3 = tl[k + 3] < l3 ? tl[k + 3] : l3;
        h0 = th[k] > h0 ? th[k] : h0; h1 = th[k + 1] > h1 ? th[k + 1] : h1;
        h2 = th[k + 2] > h2 ? th[k + 2] : h2; h3 = th[k + 3] > h3 ? th[k + 3] : h3;
    }
    for (k = i; k + 4 <= n; k += 4) {   /* comparisons with NaN are false: NaN is skipped */
        l0 = x[k] < l0 ? x[k] : l0; l1 = x[k + 1] < l1 ? x[k + 1] : l1;
        l2 = x[k + 2] < l2 ? x[k + 2] : l2; l3 = x[k + 3] < l3 ? x[k + 3] : l3;
        h0 = x[k] > h0 ? x[k] : h0; h1 = x[k + 1] > h1 ? x[k + 1] : h1;
        h2 = x[k + 2] > h2 ? x[k + 2] : h2; h3 = x[k + 3] > h3 ? x[k + 3] : h3;
    }
    for (; k < n; k++) {
        l0 = x[k] < l0 ? x[k] : l0;
        h0 = x[k] > h0 ? x[k] : h0;
    }
    l0 = l1 < l0 ? l1 : l0; l2 = l3 < l2 ? l3 : l2; a = l2 < l0 ? l2 : l0;
    h0 = h1 > h0 ? h1 : h0; h2 = h3 > h2 ? h3 : h2; b = h2 > h0 ? h2 : h0;
    if (a != 0.0f && b != 0.0f) {
        *mn = a;
        *mx = b;
        return;
    }
    float c[QT_U + QV_W];
    size_t nc = QT_U;
    qv_storeu_f(c, lo0); qv_storeu_f(c + QV_W, lo1);
    qv_storeu_f(c + 2 * QV_W, lo2); qv_storeu_f(c + 3 * QV_W, lo3);
    for (k = i; k < n; k++) c[nc++] = x[k];
    *mn = qt_reduce(c, nc, 0, x, n);
    nc = QT_U;
    qv_storeu_f(c, hi0); qv_storeu_f(c + QV_W, hi1);
    qv_storeu_f(c + 2 * QV_W, hi2); qv_storeu_f(c + 3 * QV_W, hi3);
    for (k = i; k < n; k++) c[nc++] = x[k];
    *mx = qt_reduce(c, nc, 1, x, n);
}

/* ---- table entries ---- */

#define QT_QFN(xk, qk, yk)                                                                  \
    static void QT_N(q_##xk##_##qk##_##yk)(const void *x, void *y, size_t n,                \
                                           const qk_qparams *p)                              \
    { qt_quant_run(xk, qk, yk, x, y, n, p); }
#define QT_QFN_Y(xk, qk) QT_QFN(xk, qk, QK_Y_B8) QT_QFN(xk, qk, QK_Y_B16) \
    QT_QFN(xk, qk, QK_Y_P4) QT_QFN(xk, qk, QK_Y_P2)
#define QT_QROW(xk, qk) { QT_N(q_##xk##_##qk##_QK_Y_B8), QT_N(q_##xk##_##qk##_QK_Y_B16), \
                          QT_N(q_##xk##_##qk##_QK_Y_P4), QT_N(q_##xk##_##qk##_QK_Y_P2) }
#define QT_QNULL { NULL, NULL, NULL, NULL }

#define QT_DFN(dk, ok)                                                                    \
    static void QT_N(d_##dk##_##ok)(const void *x, void *y, size_t n, const qk_dparams *p) \
    { qt_deq_run(dk, ok, x, y, n, p); }

#define QT_QFN_B(xk, qk) QT_QFN(xk, qk, QK_Y_B8) QT_QFN(xk, qk, QK_Y_B16)

/* Fused: float32 x with every output kind, and the byte outputs of the other rows a call
 * reaches without precision= (docs/CONTRACT.md rule 1: the operands' own quotient precision). */
QT_QFN_Y(QK_X_F32, QK_Q_F32)
/* bfloat16 inputs; sse41.c leaves them to scalar.c (QV_BF16_IN 0: CPUs without AVX2) */
#if !defined(QV_BF16_IN) || QV_BF16_IN
QT_QFN_B(QK_X_BF16, QK_Q_F32)
QT_QFN_B(QK_X_BF16, QK_Q_BF16)
#define QT_BF16ROW(qk) QT_QROW(QK_X_BF16, qk)
#else
#define QT_BF16ROW(qk) QT_QNULL
#endif
#if QV_HAVE_F16C
QT_QFN_B(QK_X_F16, QK_Q_F32)
QT_QFN_B(QK_X_F16, QK_Q_F16)
#endif

/* ---- staged rows ----
 * The rarer rows run in chunks of QT_CH elements through a buffer that stays in L1, then
 * through a fused entry:
 * - packed 4-/2-bit outputs of the natural rows: the row's byte entry (codes masked to the
 *   field) into the buffer, then packed (qt_pack);
 * - rows only precision= reaches: quotients into a float32 buffer (qt_quots: those of
 *   docs/CONTRACT.md rule 1 by division, or with reciprocals the per-element form's q, which
 *   rounds to the same integer), then the float32 row with every scale 1: q / 1 is q
 *   exactly, so its clamp, rounding and zero point see the same quotient. The C parity test
 *   checks every entry. */

#ifndef QT_CH
#define QT_CH 1024   /* elements per chunk: a multiple of 4 * QV_W */
#endif

/* Length of the chunk starting at a: whole entries when they fit (a run starts on an entry
 * boundary, so then does every chunk), else the rest of a's entry, at most QT_CH. */
QT_INLINE size_t qt_chunk(size_t a, size_t n, size_t blk)
{
    size_t m = blk <= QT_CH ? QT_CH / blk * blk : blk - a % blk;
    m = m < QT_CH ? m : QT_CH;
    return n - a < m ? n - a : m;
}

/* Parameters of the chunk from a on as a run of its own (blk stays: a chunk inside one entry
 * is shorter than blk, so a single entry). */
QT_INLINE void qt_chunk_params(qk_qparams *c, const qk_qparams *p, size_t a, size_t blk)
{
    size_t e = a / blk;
    *c = *p;
    c->scale = p->scale + e;
    c->rscale = p->rscale ? p->rscale + e : NULL;
    c->zp = p->zp ? p->zp + e : NULL;
    c->phase = 0;
    c->stream = 0;
}

/* the pack stage serves the packed outputs of the bfloat16 / float16 input rows */
#if !defined(QV_BF16_IN) || QV_BF16_IN || QV_HAVE_F16C
/* m codes (each within its field) to packed data from slot `slot` of y on; the bytes shared
 * with elements outside are read-modify-written. */
QT_NOINLINE void qt_pack(int yk, const unsigned char *c, unsigned char *y, size_t slot,
                         size_t m)
{
    unsigned per = yk == QK_Y_P4 ? 2u : 4u;
    size_t i = 0;
    for (; i < m && (slot + i) % per; i++) qt_put_packed(yk, y, slot + i, c[i]);
    unsigned char *o = y + (slot + i) / per;
    /* as qx_pack4 / qx_pack2 (x86_bytes.h), 4 QV_W codes at a time */
    if (yk == QK_Y_P4) {
        for (; m - i >= 4 * QV_W; i += 4 * QV_W, o += 2 * QV_W) {
#if QV_W == 16
            __m512i w = _mm512_maddubs_epi16(_mm512_loadu_si512(c + i), _mm512_set1_epi16(0x1001));
            _mm256_storeu_si256((__m256i *)o, _mm512_cvtepi16_epi8(w));
#elif QV_W == 8
            __m256i w = _mm256_maddubs_epi16(_mm256_loadu_si256((const __m256i *)(c + i)),
                                             _mm256_set1_epi16(0x1001));
            w = _mm256_permute4x64_epi64(_mm256_packus_epi16(w, w), 0x08);
            _mm_storeu_si128((__m128i *)o, _mm256_castsi256_si128(w));
#else
            _mm_storel_epi64((__m128i *)o, qx_pack4(_mm_loadu_si128((const __m128i *)(c + i))));
#endif
        }
    } else {
        for (; m - i >= 4 * QV_W; i += 4 * QV_W, o += QV_W) {
#if QV_W == 16
            __m512i w = _mm512_maddubs_epi16(_mm512_loadu_si512(c + i), _mm512_set1_epi16(0x0401));
            w = _mm512_madd_epi16(w, _mm512_set1_epi32(0x00100001));
            _mm_storeu_si128((__m128i *)o, _mm512_cvtepi32_epi8(w));
#elif QV_W == 8
            __m256i w = _mm256_maddubs_epi16(_mm256_loadu_si256((const __m256i *)(c + i)),
                                             _mm256_set1_epi16(0x0401));
            w = _mm256_madd_epi16(w, _mm256_set1_epi32(0x00100001));
            w = _mm256_packus_epi16(_mm256_packs_epi32(w, w), w);   /* 4 bytes per lane */
            w = _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
            _mm_storel_epi64((__m128i *)o, _mm256_castsi256_si128(w));
#else
            qx_store32(o, qx_pack2(_mm_loadu_si128((const __m128i *)(c + i))));
#endif
        }
    }
    for (; i < m; i++) qt_put_packed(yk, y, slot + i, c[i]);
}

/* A packed output through the row's byte entry b8. */
QT_NOINLINE void qt_pack_staged(qk_quant_fn b8, int yk, size_t xs, const void *xv, void *y,
                                size_t n, const qk_qparams *p)
{
    const char *x = (const char *)xv;
    size_t blk = p->blk ? p->blk : 1;
    unsigned char buf[QT_CH];
    qk_qparams c;
    for (size_t a = 0, m; a < n; a += m) {
        m = qt_chunk(a, n, blk);
        qt_chunk_params(&c, p, a, blk);
        c.mask = yk == QK_Y_P4 ? 0x0fu : 0x03u;
        b8(x + a * xs, buf, m, &c);
        qt_pack(yk, buf, (unsigned char *)y, p->phase + a, m);
    }
}
#endif

/* One vector of the quotients of precision qk that a fused entry would convert to integers:
 * with reciprocals (rec), the per-element form's q of qt_qrawe (which rounds to the integer
 * of the correctly rounded quotient); else the quotient of docs/CONTRACT.md rule 1 itself, by
 * division, as scalar.c (x widened, rounded to the precision, divided by s, which is already
 * in it, and rounded again); cast: float32(x) alone. */
QT_INLINE vf qt_quot1(int xk, int qk, int rec, int cast, const void *x, vf s, vf r)
{
    if (cast) return qv_load_x(xk, x);
#if QV_HAVE_FMA
    if (rec) return qt_qfe(xk, qk, x, s, r);
#else
    (void)rec;
    (void)r;
#endif
    return qt_qround(qk, qv_div(qt_numer(xk, qk, x), s));
}

/* q[0, m) from x[0, m), element i with scale s[i & im] and reciprocal r[i & im] (im = 0: one
 * entry, s and r hold it QV_W times). q has room for a partial last vector. */
QT_INLINE void qt_quots(int xk, int qk, int rec, int cast, const char *x, float *q,
                        const float *s, const float *r, size_t im, size_t m)
{
    size_t xs = qt_xsize(xk), i = 0;
    for (; m - i >= QV_W; i += QV_W)
        qv_storeu_f(q + i, qt_quot1(xk, qk, rec, cast, x + i * xs, qv_loadu_f(s + (i & im)),
                                    qv_loadu_f(r + (i & im))));
    if (i < m) {   /* padding lanes: 0 / 1 */
        unsigned char t[4 * QV_W];
        float st[QV_W], rt[QV_W];
        memset(t, 0, sizeof t);
        memcpy(t, x + i * xs, (m - i) * xs);
        for (size_t k = 0; k < QV_W; k++) {
            st[k] = k < m - i ? s[(i + k) & im] : 1.0f;
            rt[k] = k < m - i ? r[(i + k) & im] : 1.0f;
        }
        qv_storeu_f(q + i, qt_quot1(xk, qk, rec, cast, t, qv_loadu_f(st), qv_loadu_f(rt)));
    }
}

/* The (x, precision) pairs of the staged rows. */
#define QT_QCASE(xk, qk)                                                                    \
    case xk * QK_NQ + qk: qt_quots(xk, qk, rec, cast, x, q, s, r, im, m); break;

QT_INLINE void qt_quots_any(int xk, int qk, int rec, int cast, const char *x, float *q,
                            const float *s, const float *r, size_t im, size_t m)
{
    switch (xk * QK_NQ + qk) {
    QT_QCASE(QK_X_F32, QK_Q_BF16)
    QT_QCASE(QK_X_I32, QK_Q_BF16)
#if QV_HAVE_F16C
    QT_QCASE(QK_X_F32, QK_Q_F16)
    QT_QCASE(QK_X_F16, QK_Q_BF16)
    QT_QCASE(QK_X_BF16, QK_Q_F16)
    QT_QCASE(QK_X_I32, QK_Q_F16)
#endif
    default: QT_QCASE(QK_X_I32, QK_Q_F32)
    }
}

/* A row only precision= reaches: the quotients of each chunk, then f32, the float32 row of
 * output kind yk, with every scale (and reciprocal) 1. Float32 quotients of int32 x need no
 * stage of their own when f32 may use reciprocals: the cast of x (the precision's rounding)
 * is the stage, and f32 divides by the real scales. */
QT_NOINLINE void qt_quot_staged(qk_quant_fn f32, int xk, int qk, int yk, const void *xv,
                                void *yv, size_t n, const qk_qparams *p)
{
    const char *x = (const char *)xv;
    unsigned char *y = (unsigned char *)yv;
    size_t blk = p->blk ? p->blk : 1, xs = qt_xsize(xk), ones = 0;
    unsigned per = yk == QK_Y_P4 ? 2u : yk == QK_Y_P2 ? 4u : 1u;
    float q[QT_CH + QV_W], sb[QT_CH + QV_W], rb[QT_CH + QV_W], one[QT_CH + QV_W];
    int32_t zb[QT_CH + QV_W];
    int rec = QV_HAVE_FMA && p->rscale;
    int cast = qk == QK_Q_F32 && (rec || !QV_HAVE_FMA);
    qk_qparams c;
    for (size_t a = 0, m; a < n; a += m) {
        m = qt_chunk(a, n, blk);
        qt_chunk_params(&c, p, a, blk);
        size_t ne = blk >= m ? 1 : (m + blk - 1) / blk;   /* entries */
        const float *s = c.scale, *r = rec ? c.rscale : c.scale;
        if (ne == 1 || (blk % QV_W == 0 && !cast)) {
            /* one entry at a time, s and r holding it QV_W times (expanding blocks of whole
             * vectors would cost two stores and loads per vector) */
            for (size_t k = 0, e = 0; k < m; k += blk, e++) {
                qv_storeu_f(sb, qv_set1(s[e]));
                qv_storeu_f(rb, qv_set1(r[e]));
                qt_quots_any(xk, qk, rec, cast, x + (a + k) * xs, q + k, sb, rb, 0,
                             m - k < blk ? m - k : blk);
            }
        } else {
            if (blk > 1) {
                qt_expand(c.scale, c.zp, blk, 0, m, sb, zb);
                if (rec) qt_expand_f(c.rscale, blk, 0, m, rb);
                s = sb;
                r = rec ? rb : sb;
            }
            qt_quots_any(xk, qk, rec, cast, x + a * xs, q, s, r, ~(size_t)0, m);
        }
        if (!cast) {
            /* f32 with scale 1: one entry without zero points; else the entries (long
             * blocks, or blocks of whole vectors, which f32 broadcasts one per vector) or one
             * per element (zero points expanded: the per-element form reads them directly) */
            size_t ne2 = !c.zp || ne == 1 ? 1 : blk % QV_W == 0 || blk >= 64 ? ne : m;
            for (; ones < ne2; ones += QV_W) qv_storeu_f(one + ones, qv_set1(1.0f));
            c.scale = one;
            c.rscale = one;
            if (ne2 == 1) {
                c.blk = m;
            } else if (ne2 == m && blk > 1) {
                c.blk = 1;
                c.zp = zb;
            }
        }
        if (per > 1) {
            c.phase = (unsigned)((p->phase + a) % per);
            f32(q, y + (p->phase + a) / per, m, &c);
        } else {
            f32(q, y + a * (yk == QK_Y_B16 ? 2u : 1u), m, &c);
        }
    }
}

/* Table entries of the staged rows, named as the fused ones. */
#define QT_PFN(xk, qk, yk)                                                                  \
    static void QT_N(q_##xk##_##qk##_##yk)(const void *x, void *y, size_t n,                \
                                           const qk_qparams *p)                              \
    { qt_pack_staged(QT_N(q_##xk##_##qk##_QK_Y_B8), yk, qt_xsize(xk), x, y, n, p); }
#define QT_PFN_P(xk, qk) QT_PFN(xk, qk, QK_Y_P4) QT_PFN(xk, qk, QK_Y_P2)
#define QT_SFN(xk, qk, yk)                                                                  \
    static void QT_N(q_##xk##_##qk##_##yk)(const void *x, void *y, size_t n,                \
                                           const qk_qparams *p)                              \
    { qt_quot_staged(QT_N(q_QK_X_F32_QK_Q_F32_##yk), xk, qk, yk, x, y, n, p); }
#define QT_SFN_Y(xk, qk) QT_SFN(xk, qk, QK_Y_B8) QT_SFN(xk, qk, QK_Y_B16) \
    QT_SFN(xk, qk, QK_Y_P4) QT_SFN(xk, qk, QK_Y_P2)

#if !defined(QV_BF16_IN) || QV_BF16_IN
QT_PFN_P(QK_X_BF16, QK_Q_F32)
QT_PFN_P(QK_X_BF16, QK_Q_BF16)
#endif
QT_SFN_Y(QK_X_F32, QK_Q_BF16)
QT_SFN_Y(QK_X_I32, QK_Q_F32)
QT_SFN_Y(QK_X_I32, QK_Q_BF16)
QT_DFN(QK_D_B8, QK_O_F32)
QT_DFN(QK_D_B16, QK_O_F32)
QT_DFN(QK_D_P4, QK_O_F32)
QT_DFN(QK_D_P2, QK_O_F32)
/* bfloat16 outputs of the integer dequantize rows; sse41.c leaves them to scalar.c (QV_BF16_OUT
 * 0: 22 KB of code for CPUs without AVX2 asked for bfloat16) */
#if !defined(QV_BF16_OUT) || QV_BF16_OUT
QT_DFN(QK_D_B8, QK_O_BF16)
QT_DFN(QK_D_B16, QK_O_BF16)
QT_DFN(QK_D_P4, QK_O_BF16)
QT_DFN(QK_D_P2, QK_O_BF16)
#define QT_BF16O(f) f
#else
#define QT_BF16O(f) NULL
#endif
#if QV_HAVE_F16C
QT_PFN_P(QK_X_F16, QK_Q_F32)
QT_PFN_P(QK_X_F16, QK_Q_F16)
QT_SFN_Y(QK_X_F32, QK_Q_F16)
QT_SFN_Y(QK_X_F16, QK_Q_BF16)
QT_SFN_Y(QK_X_BF16, QK_Q_F16)
QT_SFN_Y(QK_X_I32, QK_Q_F16)
QT_DFN(QK_D_B8, QK_O_F16)
QT_DFN(QK_D_B16, QK_O_F16)
QT_DFN(QK_D_P4, QK_O_F16)
QT_DFN(QK_D_P2, QK_O_F16)
#define QT_F16(f) f
#define QT_F16ROW(xk, qk) QT_QROW(xk, qk)
#else
#define QT_F16(f) NULL
#define QT_F16ROW(xk, qk) QT_QNULL
#endif

/* A file that vectorises the float8 / float4 kinds (x86_fp8.h) defines these first. */
#ifndef QT_F32_ROW
#define QT_F32_ROW QT_QROW(QK_X_F32, QK_Q_F32)
#endif
#ifndef QT_FP_DROWS
#define QT_FP_DROWS
#endif
#ifndef QT_B32_DROW   /* x86_quark.h: int32 / uint32 dequantization */
#define QT_B32_DROW { NULL, NULL, NULL }
#endif

#define QT_DROW(dk) { QT_N(d_##dk##_QK_O_F32), QT_F16(QT_N(d_##dk##_QK_O_F16)), \
                         QT_BF16O(QT_N(d_##dk##_QK_O_BF16)) }

/* The table; float64 quotients (int32 x) stay with scalar.c, 32-bit dequantization too
 * unless x86_quark.h sets QT_B32_DROW. */
#define QT_TABLE(sym, name)                                                                  \
    const qk_table sym = {                                                                   \
        name,                                                                                \
        {                                                                                    \
            { QT_F32_ROW, QT_F16ROW(QK_X_F32, QK_Q_F16),                                    \
              QT_QROW(QK_X_F32, QK_Q_BF16), QT_QNULL },                                     \
            { QT_F16ROW(QK_X_F16, QK_Q_F32), QT_F16ROW(QK_X_F16, QK_Q_F16),     \
              QT_F16ROW(QK_X_F16, QK_Q_BF16), QT_QNULL },                             \
            { QT_BF16ROW(QK_Q_F32), QT_F16ROW(QK_X_BF16, QK_Q_F16),                      \
              QT_BF16ROW(QK_Q_BF16), QT_QNULL },                                            \
            { QT_QROW(QK_X_I32, QK_Q_F32), QT_F16ROW(QK_X_I32, QK_Q_F16),             \
              QT_QROW(QK_X_I32, QK_Q_BF16), QT_QNULL },                                     \
        },                                                                                   \
        {                                                                                    \
            QT_DROW(QK_D_B8), QT_DROW(QK_D_B16), QT_DROW(QK_D_P4), QT_DROW(QK_D_P2),         \
            QT_B32_DROW,                                                                     \
            QT_FP_DROWS                                                                      \
        },                                                                                   \
        QT_N(minmax),                                                                        \
    }

#endif
