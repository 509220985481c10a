/* The run driver of every SIMD instruction set (sse41.c, avx2.c, avx512.c, neon.c), written
 * once over each file's vector layer (README.md beside this file lists what a layer
 * provides). The including file defines its layer, then includes this file, then
 * registry.def through the QK_ENTRIES macro below to name its table entries.
 *
 * A run (kernels.h) is split into
 *   - a head and a tail that share a byte (packed outputs / inputs) or a vector with
 *     elements outside the run, done by the scalar kernel (qk_quant_scalar / qk_dequant_scalar
 *     on a sub-run: the reference, and rare: at most a chunk per run);
 *   - a body of whole chunks of QD_U = 4 QV_W elements, whose parameters come from layout.h,
 *     with the last chunk moved back to end on the body's end when x and y do not overlap
 *     (its elements are written twice, with the same values).
 * The hot loops are inlined into one function per table entry, so element type, quotient
 * precision and output kind are constants in them.
 *
 * Bit-exactness rests on doing the same float operations as scalar.c, in the same order:
 * the same correctly rounded quotient (the exact reciprocal form of docs/EXACT-DIVISION.md
 * with FMA, which rounds to the same integer or float8/6/4 code), the same roundings to
 * float16 / bfloat16, the same saturation, and round-to-nearest-even conversions. */
#ifndef QSIMD_GENERIC_DRIVER_H
#define QSIMD_GENERIC_DRIVER_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../kernels.h"
#include "../convert.h"

#if defined(_MSC_VER) && !defined(__clang__)
#define QD_INLINE static __forceinline
#define QD_NOINLINE static __declspec(noinline)
#else
#define QD_INLINE static inline __attribute__((always_inline))
#define QD_NOINLINE static __attribute__((noinline))
#endif

#define QD_N(name) QD_N2(QV_ISA, name)
#define QD_N2(isa, name) QD_N3(isa, name)
#define QD_N3(isa, name) isa##_##name

/* The reciprocal form's bound on |x / s| before the correction: a power of two above every
 * |q| of a 16-bit code range, so that clamping there changes no result, and small enough
 * that QD_RK * |s| stays finite (|s| <= QK_RECIP_MAX). */
#define QD_RK 131072.0f

/* Calls marked p->stream (too large for the caches) write the body of single-entry runs
 * QD_NT elements at a time into an L1 buffer, then stream it to y a cache line at a time
 * with non-temporal stores: y's lines are not read first. Every output size of QD_NT
 * elements is a multiple of 64 bytes; runs under QD_NT_MIN elements keep plain stores. */
#define QD_NT 2048
#define QD_NT_MIN (4 * QD_NT)

/* A layer without non-temporal stores (QV_NT 0) ignores p->stream: the buffer would only add
 * a copy. */
#if defined(QV_NT) && !QV_NT
#define QD_STREAM(o, p) 0
#else
#define QD_STREAM(o, p) QD_P(o, p, stream)
#endif

#include "layout.h"

/* ---- sizes ---- */

QD_INLINE size_t qd_xsize(int xk) { return xk == QK_X_F32 || xk == QK_X_I32 ? 4u : 2u; }

/* output kinds: elements per group and bytes per group */
QD_INLINE unsigned qd_yper(int yk)
{
    return yk == QK_Y_P4 || yk == QK_Y_PE2M1 ? 2u : yk == QK_Y_P2 || yk == QK_Y_PE2M3 ||
           yk == QK_Y_PE3M2 ? 4u : 1u;
}
QD_INLINE size_t qd_ybytes(int yk, size_t m)   /* m: whole groups */
{
    switch (yk) {
    case QK_Y_B16: case QK_Y_F16: case QK_Y_BF16: return 2 * m;
    case QK_Y_B32: return 4 * m;
    case QK_Y_P4: case QK_Y_PE2M1: return m / 2;
    case QK_Y_P2: return m / 4;
    case QK_Y_PE2M3: case QK_Y_PE3M2: return m / 4 * 3;
    default: return m;
    }
}
QD_INLINE int qd_is_int(int yk) { return yk <= QK_Y_P2; }
QD_INLINE int qd_is_quark(int yk) { return yk == QK_Y_B32 || yk == QK_Y_F16 || yk == QK_Y_BF16; }
QD_INLINE int qd_fmt(int yk)
{
    return yk == QK_Y_E4M3FN ? QK_FP_E4M3FN : yk == QK_Y_E5M2 ? QK_FP_E5M2
           : yk == QK_Y_E2M3 || yk == QK_Y_PE2M3 ? QK_FP_E2M3
           : yk == QK_Y_E3M2 || yk == QK_Y_PE3M2 ? QK_FP_E3M2 : QK_FP_E2M1;
}
QD_INLINE int qd_is_f6(int yk) { return qd_fmt(yk) == QK_FP_E2M3 || qd_fmt(yk) == QK_FP_E3M2; }

/* input kinds of DequantizeLinear as the output kind of the same layout (kernels.h: the same
 * order but for B32), for the sizes and formats above */
QD_INLINE int qd_d2y(int dk)
{
    return dk == QK_D_B32 ? QK_Y_B32 : dk >= QK_D_E4M3FN && dk <= QK_D_PE2M1 ? dk - 1 : dk;
}
QD_INLINE unsigned qd_dper(int dk) { return qd_yper(qd_d2y(dk)); }
QD_INLINE size_t qd_xbytes(int dk, size_t m) { return qd_ybytes(qd_d2y(dk), m); }
QD_INLINE size_t qd_osize(int ok) { return ok == QK_O_F32 ? 4u : ok == QK_O_E8M0 ? 1u : 2u; }
QD_INLINE int qd_dfmt(int dk) { return qd_fmt(qd_d2y(dk)); }

/* byte offset of the group holding slot `slot` of packed data */
QD_INLINE size_t qd_goff(unsigned per, unsigned gbytes, size_t slot)
{
    return slot / per * gbytes;
}

QD_INLINE int qd_disjoint(const void *x, size_t xb, const void *y, size_t yb)
{
    uintptr_t a = (uintptr_t)x, b = (uintptr_t)y;
    return a + xb <= b || b + yb <= a;
}

/* A field of the run's parameters P: qk_dparams when dequantizing (dq), else qk_qparams. */
#define QD_PF(dq, P, f) ((dq) ? ((const qk_dparams *)(P))->f : ((const qk_qparams *)(P))->f)

/* The scalar kernel on elements [a, b) of the run (x, y, p: the run's). qd_sub: the sub-run's
 * pos and phase, and the offset of its first byte on the packed side (y when quantizing, x
 * when dequantizing), whose kind is pk (an output kind). */
QD_INLINE size_t qd_sub(int pk, size_t *pos, unsigned *phase, size_t a)
{
    unsigned per = qd_yper(pk);
    *pos += a;
    if (per == 1) return qd_ybytes(pk, a);
    size_t slot = *phase + a;
    *phase = (unsigned)(slot % per);
    return qd_goff(per, per == 4 && pk != QK_Y_P2 ? 3u : 1u, slot);
}

QD_NOINLINE void qd_qscalar(int xk, int qk, int yk, const char *x, unsigned char *y,
                            size_t a, size_t b, const qk_qparams *p)
{
    if (a >= b) return;
    qk_qparams q = *p;
    size_t g = qd_sub(yk, &q.pos, &q.phase, a);
    qk_quant_scalar(xk, qk, yk, x + a * qd_xsize(xk), y + g, b - a, &q);
}

QD_NOINLINE void qd_dscalar(int dk, int ok, const char *x, unsigned char *y, size_t a, size_t b,
                            const qk_dparams *p)
{
    if (a >= b) return;
    qk_dparams q = *p;
    size_t g = qd_sub(qd_d2y(dk), &q.pos, &q.phase, a);
    qk_dequant_scalar(dk, ok, x + g, y + a * qd_osize(ok), b - a, &q);
}

/* ---- quantize ---- */

/* x rounded to the quotient precision */
QD_INLINE vf qd_numer(int xk, int qk, const char *x)
{
    vf v = qv_load_x(xk, x);
#if QV_F16
    if (qk == QK_Q_F16 && xk != QK_X_F16) v = qv_round_f16(v);
#endif
    if (qk == QK_Q_BF16 && xk != QK_X_BF16) v = qv_round_bf16(v);
    return v;
}

QD_INLINE vf qd_qround(int qk, vf q)
{
#if QV_F16
    if (qk == QK_Q_F16) q = qv_round_f16(q);
#endif
    if (qk == QK_Q_BF16) q = qv_round_bf16(q);
    return q;
}

/* Integer outputs: the quotient rounded to an int32 that the store saturates (NaN and
 * everything below the range far below it, everything above far above).
 * With FMA, the reciprocal form q0 = x r, q1 = q0 + (x - q0 s) r. Form A (every scale of
 * the run positive): x is first bounded above at QD_RK s, exactly, which keeps every result
 * and every product finite above; below, huge quotients, -inf and NaN x reach the conversion
 * as NaN, -inf or far below the range. Form B (negs): q0 is bounded at QD_RK instead, which
 * leaves q1 beyond the range (or NaN) with the true quotient's side.
 * Without FMA: the true quotient. */
QD_INLINE vi qd_qraw(int xk, int qk, int negs, const char *x, vf s, vf r, vf xl)
{
    vf n = qd_numer(xk, qk, x), q;
    (void)xl;
#if QV_FMA
    if (!negs) {
        n = qv_bound_x(n, xl);
        vf q0 = qv_mul(n, r);
        return qv_cvt_a(qd_qround(qk, qv_fmadd(qv_fnmadd(q0, s, n), r, q0)), qk == QK_Q_F16);
    }
    vf q0 = qv_min(qv_mul(n, r), qv_set1(QD_RK));
    q = qv_fmadd(qv_fnmadd(q0, s, n), r, q0);
#else
    (void)negs;
    (void)r;
    q = qv_div(n, s);
#endif
    return qv_cvt_raw(qd_qround(qk, q));
}

#if QV_FP
/* float8 / float4 / float6 codes of x / s (float zero points take the scalar kernel): with
 * rec (reciprocals given), the exact reciprocal form, whose q1 rounds to the same code as the true quotient;
 * where q1 is +-0 or NaN, q0 = x r has the quotient's sign of zero and x's NaN. Otherwise the
 * true division, as scalar.c. */
QD_INLINE vi qd_qfp(int yk, int sat, int rec, const char *x, vf s, vf r)
{
    vf xv = qv_loadu_f((const float *)x), q;
    int fmt = qd_fmt(yk);
#if defined(QV_F6)
    if (qd_is_f6(yk)) {
        if (rec) return qv_f6_rec(xv, s, qv_mul(r, qv_set1(-1.0f)), fmt, NULL);
        q = qv_div(xv, s);
        return qv_to_f6(q, q, fmt);
    }
#endif
#if QV_FMA
    if (rec) {
        vf q0 = qv_mul(xv, r);
        q = qv_fix_recip(qv_fmadd(qv_fnmadd(q0, s, xv), r, q0), q0);
    } else
#endif
    {
        (void)r;
        q = qv_div(xv, s);
    }
    return qv_to_fp(q, fmt, sat);
}

#endif

/* The constants of a run's integer stores, and of float code stores (codes 0 .. 255). */
typedef struct qd_qk {
    qv_qc ic, bc;
} qd_qk;

/* One chunk: 4 vectors of QV_W inputs (xv[v], consecutive or rows of a tile) to the QD_U
 * outputs at y. */
QD_INLINE void qd_qchunk(int xk, int qk, int yk, int sat, int rec, int negs,
                         const char *const xv[4], unsigned char *y, const qd_pv *pv,
                         const qd_qk *k)
{
    vi c[4];
    (void)sat; (void)rec;
    if (qd_is_int(yk)) {
        QD_UNROLL
        for (int v = 0; v < 4; v++)
            c[v] = qd_qraw(xk, qk, negs, xv[v], pv->s[v], pv->r[v], QD_XL(pv->s[v]));
        qv_qstore4(yk, y, c, pv->z, &k->ic);
        return;
    }
#if QV_FP
#if defined(QV_F6)
    if (qd_is_f6(yk) && rec && yk != QK_Y_E2M3 && yk != QK_Y_E3M2) {
        /* packed float6: the magnitudes, and the signs of q0 added by the store */
        vi q0[4];
        QD_UNROLL
        for (int v = 0; v < 4; v++)
            c[v] = qv_f6_rec(qv_loadu_f((const float *)xv[v]), pv->s[v],
                             qv_mul(pv->r[v], qv_set1(-1.0f)), qd_fmt(yk), &q0[v]);
        qv_store6_4(y, c, q0);
        return;
    }
#endif
    QD_UNROLL
    for (int v = 0; v < 4; v++)
        c[v] = qd_qfp(yk, sat, rec, xv[v], pv->s[v], pv->r[v]);
    if (yk == QK_Y_PE2M3 || yk == QK_Y_PE3M2) {
        vi ones[4] = {qv_set1_i(-1), qv_set1_i(-1), qv_set1_i(-1), qv_set1_i(-1)};
        qv_store6_4(y, c, ones);
    } else {
        vi z[4] = {qv_set1_i(0), qv_set1_i(0), qv_set1_i(0), qv_set1_i(0)};
        qv_qstore4(yk == QK_Y_PE2M1 ? QK_Y_P4 : QK_Y_B8, y, c, z, &k->bc);
    }
#endif
}

/* Two consecutive chunks of integer codes of float32 x that share one entry (QV_PAIR: for an
 * in-order core, NEON's Cortex-A55; float32 x only: every entry would carry the extra copy).
 * qd_qraw's operations, each step for all 8 vectors before the next, so that independent
 * work always separates dependent operations, and every conversion before the stores. */
#ifndef QV_PAIR
#define QV_PAIR 0
#endif
QD_INLINE void qd_qpair(int xk, int qk, int yk, int negs, const char *x, unsigned char *y,
                        const qd_pv *pv, const qd_qk *k)
{
    size_t xs = qd_xsize(xk);
    vi c[8];
#if QV_FMA
    if (!negs) {   /* form A */
        vf n[8], q0[8];
        QD_UNROLL8
        for (int v = 0; v < 8; v++) n[v] = qd_numer(xk, qk, x + v * QV_W * xs);
        QD_UNROLL8
        for (int v = 0; v < 8; v++) n[v] = qv_bound_x(n[v], QD_XL(pv->s[v & 3]));
        QD_UNROLL8
        for (int v = 0; v < 8; v++) q0[v] = qv_mul(n[v], pv->r[v & 3]);
        QD_UNROLL8
        for (int v = 0; v < 8; v++) n[v] = qv_fnmadd(q0[v], pv->s[v & 3], n[v]);
        QD_UNROLL8
        for (int v = 0; v < 8; v++) n[v] = qv_fmadd(n[v], pv->r[v & 3], q0[v]);
        QD_UNROLL8
        for (int v = 0; v < 8; v++) c[v] = qv_cvt_a(qd_qround(qk, n[v]), qk == QK_Q_F16);
    } else
#endif
    {
        QD_UNROLL8
        for (int v = 0; v < 8; v++)
            c[v] = qd_qraw(xk, qk, negs, x + v * QV_W * xs, pv->s[v & 3], pv->r[v & 3],
                           QD_XL(pv->s[v & 3]));
    }
    qv_qstore4(yk, y, c, pv->z, &k->ic);
    qv_qstore4(yk, y + qd_ybytes(yk, QD_U), c + 4, pv->z, &k->ic);
}

/* ---- dequantize ---- */

QD_INLINE int qd_float_in(int dk) { return dk >= QK_D_E4M3FN; }

/* QV_W values: integer codes (signed when sgn is 1; sgn 2: sign-extended by h) minus the
 * zero point, exact, one rounding
 * to float32, one product; or float codes decoded exactly, minus the float zero point
 * (nf = -zf, -0 without one: x - +0 is x + -0 for every x, and either quiets a signalling
 * NaN as scalar.c's explicit quieting does), times the scale, a NaN x keeping its NaN. */
QD_INLINE vf qd_dvec(int dk, unsigned bits, int sgn, vi h, const unsigned char *x, vf s, vi z,
                     vf nf)
{
    (void)nf;
    if (!qd_float_in(dk) || !QV_FP)
        return qv_mul(qv_cvt_i2f(qv_sub_i(qv_load_codes(dk, bits, sgn, h, x), z)), s);
#if QV_FP
    vf d;
    if (dk == QK_D_F16 || dk == QK_D_BF16) {
        d = qv_load_x(dk == QK_D_F16 ? QK_X_F16 : QK_X_BF16, x);
    } else {
        vi c = dk == QK_D_PE2M1 ? qv_load_codes(QK_D_P4, 4, 0, h, x)
               : dk == QK_D_PE2M3 || dk == QK_D_PE3M2 ? qv_load6(x)
               : qv_load_codes(QK_D_B8, 8, 0, h, x);
        d = qv_from_fp(c, qd_dfmt(dk));
    }
    d = qv_add_f(d, nf);
    return qv_keep_nan(d, qv_mul(d, s));
#endif
}

QD_INLINE void qd_dchunk(int dk, int ok, unsigned bits, int sgn, vi h,
                         const char *const xv[4], unsigned char *const yv[4], const qd_pv *pv)
{
    QD_UNROLL
    for (int v = 0; v < 4; v++)
        qv_store_out(ok, yv[v], qd_dvec(dk, bits, sgn, h, (const unsigned char *)xv[v], pv->s[v], pv->z[v],
                                        qv_mul(pv->f[v], qv_set1(-1.0f))));
}

#if defined(QV_CODES4)
/* A chunk of consecutive integer codes (the body's) to consecutive results: the layer
 * converts the codes of the whole chunk minus their zero points at once (qv_codes4: whole
 * vectors of codes loaded, no integer conversion). */
QD_INLINE void qd_dcodes(int dk, int ok, unsigned bits, int sgn, vi h, const unsigned char *x,
                         unsigned char *y, const qd_pv *pv)
{
    vf d[4];
    qv_codes4(dk, bits, sgn, h, x, pv->z, d);
    QD_UNROLL
    for (int v = 0; v < 4; v++)
        qv_store_out(ok, y + v * QV_W * qd_osize(ok), qv_mul(d[v], pv->s[v]));
}
#endif

/* Pointers to 4 consecutive vectors of inputs from x. */
#define QD_XV(x, xs) {(x), (x) + QV_W * (xs), (x) + 2 * QV_W * (xs), (x) + 3 * QV_W * (xs)}

/* Blocks of whole chunks whose entries follow one another (plain blocks, or blocks along a
 * last axis of whole blocks): a loop per entry with the entry in registers, no segment walk.
 * A vector layer may leave it out (code size). */
#ifndef QD_BLOCK_RUN
#define QD_BLOCK_RUN 1
#endif
/* Chunks of a period, window or short K-row inline (layout.h's qd_src_next) in those entries;
 * a layer without block runs may still keep these. */
#ifndef QD_FAST_SRC
#define QD_FAST_SRC QD_BLOCK_RUN
#endif
QD_INLINE int qd_block_run(const qd_src *c)
{
    return QD_BLOCK_RUN && c->mode == QD_SEG && c->sega &&
           (c->row == 0 || (c->row % c->blk == 0 && c->erow == c->row / c->blk));
}

/* nb bytes of an L1 buffer to y: its whole cache lines streamed, the partial ones at either
 * end stored (y need not be aligned: blocks on chunks keep the input's alignment). */
QD_NOINLINE void qd_flush(unsigned char *y, const unsigned char *src, size_t nb)
{
    size_t h = (64 - ((uintptr_t)y & 63)) & 63, b;
    if (h > nb) h = nb;
    memcpy(y, src, h);
    for (b = h; b + 64 <= nb; b += 64) qv_stream64(y + b, src + b);
    memcpy(y + b, src + b, nb - b);
}

/* Blocks of one or two vectors whose entries follow one another, from a block's start: each
 * vector's entry broadcast from memory (a load, no shuffle), e + v / (blk / QV_W). */
QD_INLINE int qd_vec_run(const qd_src *c)
{
    return QD_BLOCK_RUN && (c->mode == QD_SEG || c->mode == QD_WIN) && c->kdim == 1 &&
           c->row == 0 && (c->blk == QV_W || c->blk == 2 * QV_W) && c->j % c->blk == 0;
}

QD_INLINE qd_pv qd_vec_pv(const qd_src *c, size_t e, unsigned sh, unsigned need)
{
    qd_pv pv;
    QD_UNROLL
    for (int v = 0; v < 4; v++) {
        size_t k = e + ((unsigned)v >> sh);
        pv.s[v] = qv_opaque(qv_set1(c->s[k]));
        pv.r[v] = need & QD_R ? qv_set1(c->r[k]) : qv_set1(1.0f);
        pv.f[v] = need & QD_F && c->f ? qv_set1(c->f[k]) : qv_set1(0.0f);
        pv.z[v] = need & QD_Z && c->z ? qv_set1_i(c->z[k]) : qv_set1_i(0);
    }
    return pv;
}

/* Segments on chunk boundaries inside a stretch: the current one in locals (a store to y
 * may alias c), moved to the next as qd_seg_next does, its entry loaded straight into the
 * broadcast vectors. */
QD_INLINE void qd_segw_next(const qd_src *c, qd_seg *w, qd_pv *pv, unsigned need)
{
    size_t end = w->segend;
    if (end == w->rowend) {
        w->e = w->rowend / c->row * c->erow;
        w->rowend += c->row;
    } else {
        w->e++;
    }
    w->segend = end + c->blk < w->rowend ? end + c->blk : w->rowend;
    *pv = qd_ent_pv(c->s, c->r, c->f, c->z, w->e - c->ebase, 0, need);
}

/* Back into c after a stretch that ended inside its segment (the stretch loop's caller moves
 * c on when it ended on the segment's end). */
QD_INLINE void qd_segw_put(qd_src *c, const qd_seg *w)
{
    if (w->segend == c->sg.segend) return;   /* (segend only grows; e may wrap) */
    c->sg = *w;
    qd_seg_load(c);
}

/* How many elements from chunk position i on (absolute c->j) share the current entry, in
 * whole chunks up to lim (with segments on chunk boundaries, the stretch loop moves to the
 * next entry itself: all of them); 0 when the next chunk needs qd_src_next. */
QD_INLINE size_t qd_stretch(const qd_src *c, size_t i, size_t lim)
{
    size_t k;
    if (c->mode == QD_UNI || (c->mode == QD_SEG && c->sega)) return (lim - i) / QD_U * QD_U;
    if (c->mode != QD_SEG || c->sg.segend - c->j < QD_U) return 0;
    k = (c->sg.segend - c->j) / QD_U * QD_U;
    return k < lim - i ? k : (lim - i) / QD_U * QD_U;
}

/* ---- the loops, written once for both directions ---- */

/* The split below (entries without block runs inline runs of one entry, qd_run_any takes
 * their other layouts) in optimized builds only: unoptimized ones (the sanitizers' -O0) fold
 * no constants, so every entry would compile both forms of every path with every kind (the
 * ASan build of avx2.c: over 11 minutes and 9 GB, against 6 without the split). */
#if defined(__OPTIMIZE__) || defined(_MSC_VER)
#define QD_SPLIT 1
#else
#define QD_SPLIT 0
#endif

/* What one table entry does per chunk, constants once inlined: quantize (x kind, quotient
 * precision, output kind, saturation, reciprocal form, negative scales, the store constants)
 * or dequantize (input kind, output kind, code bits, signedness sgn, sign bit h). */
typedef struct qd_op qd_op;
typedef void (*qd_ckfn)(const qd_op *o, const char *const xv[4], unsigned char *const yv[4],
                        size_t n, size_t xs, size_t ys, const qd_pv *pv, int one);
struct qd_op {
    int dq, xk, qk, yk, sat, rec, negs, dk, ok, sgn;
    unsigned bits;
    vi h;
    qd_qk k;
    /* Entries without block runs (qd_op_blocks) inline runs of one entry only (uni); the
     * other layouts take qd_run_any, one copy of the driver for all such entries (generic:
     * the op's fields read at run time), whose chunks call the entry's own ck, once per
     * stretch of chunks that share their entries */
    int uni, generic;
    qd_ckfn ck;
    const qd_op *src;   /* generic: the entry's op, for ck (an op whose address escaped would
                         * have its fields read again after every store to y) */
};

/* A field of the run's parameters P (qk_qparams or qk_dparams by o->dq). */
#define QD_P(o, P, f) QD_PF((o)->dq, P, f)
#define QD_RS(o, P) ((o)->dq ? NULL : ((const qk_qparams *)(P))->rscale)
#define QD_SCALAR(o, x, y, a, b, P) ((o)->dq ? qd_dscalar((o)->dk, (o)->ok, x, y, a, b, P) \
                                     : qd_qscalar((o)->xk, (o)->qk, (o)->yk, x, y, a, b, P))

/* Elements per packed group of the packed side (y when quantizing, x when dequantizing),
 * and bytes per group. */
QD_INLINE unsigned qd_per(const qd_op *o) { return o->dq ? qd_dper(o->dk) : qd_yper(o->yk); }
QD_INLINE unsigned qd_gb(const qd_op *o)
{
    return qd_per(o) == 4 && (o->dq ? o->dk != QK_D_P2 : o->yk != QK_Y_P2) ? 3u : 1u;
}
/* Bytes of i elements of x and of y (whole groups). */
QD_INLINE size_t qd_xo(const qd_op *o, size_t i)
{
    return o->dq ? qd_xbytes(o->dk, i) : i * qd_xsize(o->xk);
}
QD_INLINE size_t qd_yo(const qd_op *o, size_t i)
{
    return o->dq ? i * qd_osize(o->ok) : qd_ybytes(o->yk, i);
}
/* Byte offsets of element a of the run (a packed group's first) in x and in y. */
QD_INLINE size_t qd_xat(const qd_op *o, const void *P, size_t a)
{
    return o->dq && qd_per(o) > 1 ? qd_goff(qd_per(o), qd_gb(o), QD_P(o, P, phase) + a) : qd_xo(o, a);
}
QD_INLINE size_t qd_yat(const qd_op *o, const void *P, size_t a)
{
    return !o->dq && qd_per(o) > 1 ? qd_goff(qd_per(o), qd_gb(o), QD_P(o, P, phase) + a) : qd_yo(o, a);
}

/* One chunk of inputs xv[0..3] (vectors of QV_W: consecutive, or rows of a tile) to codes
 * at yv[0] (quantizing) or results at yv[0..3]. */
QD_INLINE void qd_chunk_v(const qd_op *o, const char *const xv[4], unsigned char *const yv[4],
                          const qd_pv *pv)
{
#if QD_SPLIT
    if (o->generic) o->ck(o->src, xv, yv, 1, 0, 0, pv, 0);
    else
#endif
    if (o->dq) qd_dchunk(o->dk, o->ok, o->bits, o->sgn, o->h, xv, yv, pv);
    else qd_qchunk(o->xk, o->qk, o->yk, o->sat, o->rec, o->negs, xv, yv[0], pv, &o->k);
}

/* The generic driver's n chunks of consecutive elements, chunk t at x + t xs, y + t ys; one:
 * the four vectors of entries in pv are the same. */
QD_INLINE void qd_ck(const qd_op *o, const char *x, unsigned char *y, size_t n, size_t xs,
                     size_t ys, const qd_pv *pv, int one)
{
    const char *xv[4] = {x, x + qd_xo(o, QV_W), x + qd_xo(o, 2 * QV_W), x + qd_xo(o, 3 * QV_W)};
    unsigned char *yv[4] = {y, y + qd_yo(o, QV_W), y + qd_yo(o, 2 * QV_W), y + qd_yo(o, 3 * QV_W)};
    o->ck(o->src, xv, yv, n, xs, ys, pv, one);
}

/* One chunk of consecutive elements (x, y: its first input and output byte). */
QD_INLINE void qd_chunk(const qd_op *o, const char *x, unsigned char *y, const qd_pv *pv)
{
#if QD_SPLIT
    if (o->generic) {
        qd_ck(o, x, y, 1, 0, 0, pv, 0);
        return;
    }
#endif
    if (!o->dq) {
        const char *xv[4] = QD_XV(x, qd_xsize(o->xk));
        qd_qchunk(o->xk, o->qk, o->yk, o->sat, o->rec, o->negs, xv, y, pv, &o->k);
        return;
    }
#if defined(QV_CODES4)
    if (!qd_float_in(o->dk)) {
        qd_dcodes(o->dk, o->ok, o->bits, o->sgn, o->h, (const unsigned char *)x, y, pv);
        return;
    }
#endif
    const char *xv[4] = {x, x + qd_xo(o, QV_W), x + qd_xo(o, 2 * QV_W), x + qd_xo(o, 3 * QV_W)};
    unsigned char *yv[4] = {y, y + qd_yo(o, QV_W), y + qd_yo(o, 2 * QV_W), y + qd_yo(o, 3 * QV_W)};
    qd_dchunk(o->dk, o->ok, o->bits, o->sgn, o->h, xv, yv, pv);
}

/* n chunks of consecutive elements that share their entries (pv; one: one entry for all),
 * chunk t at x + t xs, y + t ys. */
QD_INLINE void qd_chunks(const qd_op *o, const char *x, unsigned char *y, size_t n, size_t xs,
                         size_t ys, const qd_pv *pv, int one)
{
#if QD_SPLIT
    if (o->generic) {
        qd_ck(o, x, y, n, xs, ys, pv, one);
        return;
    }
#else
    (void)one;
#endif
    for (size_t t = 0; t < n; t++) qd_chunk(o, x + t * xs, y + t * ys, pv);
}

/* Block runs and the fast entry sources, every layout inlined, only where they pay for their
 * code: float32 x to 8/4/2-bit integer codes, and those codes to float32 (16-bit codes:
 * per-tensor activations); and in the generic driver, one copy for the other entries. */
QD_INLINE int qd_op_blocks(const qd_op *o)
{
    return o->generic || (o->dq ? o->ok == QK_O_F32 && (o->dk == QK_D_B8 || o->dk == QK_D_P4 ||
                                                         o->dk == QK_D_P2)
                                : o->xk == QK_X_F32 && (o->yk == QK_Y_B8 || o->yk == QK_Y_P4 ||
                                                        o->yk == QK_Y_P2));
}

/* The body of a run: mt elements from a group boundary (x, y: its first input and output
 * byte), parameters from c (positioned there). Whole chunks, and with ovl (x and y disjoint,
 * mt >= QD_U) a last chunk moved back to end at mt. Returns the elements done.
 * Chunks that share one entry run in a loop with the entry in registers; the others take
 * their parameters from qd_src_next one chunk at a time. One entry for the whole body
 * (per-tensor) may also write through the streaming buffer, and may start with chunks over
 * [0, t0) (rewritten by those after) so that [t0, nt1) is streamed from a cache line. Float32
 * results of a single entry start their stores on a cache line (after chunks over [0, t0)):
 * numpy's arrays are 16-byte aligned, and a store split over two cache lines costs half as
 * much again on some cores. Those of entries that vary (segments, rows of entries, periods)
 * do too, after one chunk over [0, QD_U) by the general path (per-axis 1x64x56x56 from
 * uint8: 52 -> 31 us on AVX-512). */
#ifndef QD_ALIGN_STORES   /* a vector layer may leave the second out (code size) */
#define QD_ALIGN_STORES 1
#endif
QD_INLINE size_t qd_body(const qd_op *o, const char *x, unsigned char *y, size_t mt, int ovl,
                         qd_src *c, unsigned need, int stream)
{
    size_t i = 0, m = mt / QD_U * QD_U, t0 = 0, nt1 = 0;
    int uni = o->uni || c->mode == QD_UNI, sega = !uni && c->sega, pre, fin = 0;
    int fast = QD_FAST_SRC && qd_op_blocks(o);   /* (code where it pays, as block runs) */
    union { vi v[1]; unsigned char b[4 * QD_NT]; } buf;
    if (!o->dq && uni && stream && ovl && mt >= QD_NT_MIN) {
        while (t0 < 256 && (uintptr_t)(y + qd_yo(o, t0)) % 64) t0 += 4;
        if (t0 < 256) nt1 = t0 + (mt - t0) / QD_NT * QD_NT;
        else t0 = 0;
    } else if (o->dq && uni && ovl) {
        if (o->ok == QK_O_F32 && (uintptr_t)y % 4 == 0 && (mt >= 1024 || stream)) {
            t0 = ((64 - ((uintptr_t)y & 63)) & 63) / 4;
            if ((QV_W < 8 && !stream) || t0 % 4) t0 = 0;   /* (whole groups of packed input) */
        }
        if (stream && mt - t0 >= QD_NT_MIN && (uintptr_t)(y + qd_yo(o, t0)) % 64 == 0)
            nt1 = t0 + (mt - t0) / QD_NT * QD_NT;
    } else if (QD_ALIGN_STORES && o->dq && o->ok == QK_O_F32 && ovl && (uintptr_t)y % 4 == 0 &&
               mt >= 4 * QD_U &&
               (c->mode == QD_SEG || c->mode == QD_KROW || c->mode == QD_PER) &&
               !(fast && qd_block_run(c))) {   /* (block runs keep blocks on chunks) */
        /* entries that vary: one chunk over [0, QD_U) by the general path, then from t0 */
        t0 = ((64 - ((uintptr_t)y & 63)) & 63) / 4;
        if (t0 % qd_per(o)) t0 = 0;
        m = t0 + (mt - t0) / QD_U * QD_U;   /* (whole chunks from t0) */
    }
    /* whole chunks to m, then the general loop's last chunk */
    if (fast && !o->generic && qd_block_run(c)) {
        const float *sp = c->s, *rp = c->r, *fp = c->f;
        const int32_t *zp = c->z;
        size_t e = c->sg.e - c->ebase, stop = c->sg.segend - c->j, j0 = c->j, ib = 0;
        /* too large for the caches: through the L1 buffer and streamed, as per-tensor */
        int nt = stream && ovl && m >= QD_NT_MIN;
        for (; i < m; e++, stop += c->blk) {
            qd_pv pv = qd_ent_pv(sp, rp, fp, zp, e, 0, need);
            stop = stop < m ? stop : m;
            while (QD_SPLIT && o->generic && i < stop) {   /* (one call for the block's chunks) */
                size_t nc = (stop - i + QD_U - 1) / QD_U;
                if (nt && nc > (QD_NT - (i - ib)) / QD_U) nc = (QD_NT - (i - ib)) / QD_U;
                qd_chunks(o, x + qd_xo(o, i), nt ? buf.b + qd_yo(o, i - ib) : y + qd_yo(o, i),
                          nc, qd_xo(o, QD_U), qd_yo(o, QD_U), &pv, 1);
                i += nc * QD_U;
                if (nt && i - ib == QD_NT) {
                    qd_flush(y + qd_yo(o, ib), buf.b, qd_yo(o, QD_NT));
                    ib = i;
                }
            }
            for (; i < stop; i += QD_U) {
                qd_chunk(o, x + qd_xo(o, i), nt ? buf.b + qd_yo(o, i - ib) : y + qd_yo(o, i),
                         &pv);
                if (nt && i + QD_U - ib == QD_NT) {
                    qd_flush(y + qd_yo(o, ib), buf.b, qd_yo(o, QD_NT));
                    ib = i + QD_U;
                }
            }
        }
        if (nt) memcpy(y + qd_yo(o, ib), buf.b, qd_yo(o, i - ib));
        if (i < mt) qd_src_seek(c, j0 + i);   /* (not past the run: its entries end there) */
        else c->j = j0 + i;
    } else if (fast && qd_vec_run(c) && m && !t0) {
        const qd_src cv = *c;   /* (a copy the stores to y cannot alias) */
        unsigned sh = c->blk == QV_W ? 0u : 1u;
        size_t e = c->j / c->blk - c->ebase, j0 = c->j;
        for (; i < m; i += QD_U, e += (size_t)4 >> sh) {
            qd_pv pv = qd_vec_pv(&cv, e, sh, need);
            qd_chunk(o, x + qd_xo(o, i), y + qd_yo(o, i), &pv);
        }
        if (i < mt) qd_src_seek(c, j0 + i);
        else c->j = j0 + i;
    }
    for (pre = t0 > 0;;) {
        size_t lim = fin || uni ? mt : m, i0 = i, end;
        int tobuf = !pre && i < nt1;
        /* pre: chunks up to t0 rounded up; the others whole chunks of their stretch */
        end = i + (pre ? (uni ? (t0 + QD_U - 1) / QD_U * QD_U : 0)
                       : tobuf ? QD_NT : uni ? (lim - i) / QD_U * QD_U
                       : qd_stretch(c, i, lim));
        if (end > i) {   /* (one inlined copy of this loop for every destination) */
            unsigned char *d = tobuf ? buf.b : y + qd_yo(o, i);
            /* with segments on chunk boundaries, one inner loop per segment, its entry in
             * registers */
            size_t jb = c->j - i0;   /* absolute position of element 0 */
            qd_seg w = c->sg;
            qd_pv pv = qd_const_pv(c);
            for (size_t stop;; qd_segw_next(c, &w, &pv, need)) {
                stop = sega && w.segend - jb < end ? w.segend - jb : end;
                if (QV_PAIR && !o->generic && !o->dq && o->xk == QK_X_F32 && qd_is_int(o->yk) && !pre)
                    for (; stop - i >= 2 * QD_U; i += 2 * QD_U)
                        qd_qpair(o->xk, o->qk, o->yk, o->negs, x + qd_xo(o, i),
                                 d + qd_yo(o, i - i0), &pv, &o->k);
                if (stop - i >= QD_U) {
                    size_t nc = (stop - i) / QD_U;
                    qd_chunks(o, x + qd_xo(o, i), d + qd_yo(o, i - i0), nc, qd_xo(o, QD_U),
                              qd_yo(o, QD_U), &pv, 1);
                    i += nc * QD_U;
                }
                if (i == end || !sega) break;
            }
            if (sega) qd_segw_put(c, &w);
            if (tobuf)
                for (size_t b = 0; b < qd_yo(o, QD_NT); b += 64)
                    qv_stream64(y + qd_yo(o, i0) + b, buf.b + b);
            if (!uni) {
                c->j += i - i0;
                if (c->j == c->sg.segend) qd_seg_next(c);
            }
        } else if (!uni && lim - i >= QD_U) {   /* (fast: entries per element, chunk after chunk) */
            do {
                qd_pv pv = qd_src_next(c, need, fast);
                qd_chunk(o, x + qd_xo(o, i), y + qd_yo(o, i), &pv);
                i += QD_U;
            } while (fast && !pre && c->mode >= QD_KROW && lim - i >= QD_U);
        }
        if (pre) {
            pre = 0;
            if (!uni) {
                qd_src_seek(c, c->j - i + t0);
                sega = c->sega;   /* (segments against the chunks from t0) */
            }
            i = t0;
            continue;
        }
        if (tobuf || lim - i >= QD_U) continue;
        if (fin || !ovl || i == mt) return i;
        fin = 1;   /* once more, for the last chunk (directly: it may overlap the streamed) */
        nt1 = 0;
        if (!uni) qd_src_seek(c, c->j - i + mt - QD_U);
        i = mt - QD_U;
    }
}


/* Rows whose entries vary along the row skip a tile's staging once they hold a chunk:
 * chunks straight into y (the last one moved back to end at K), entries in registers down
 * the rows (qd_qrows) or, dequantizing rows of QD_LONG or more, per row from L1 in column
 * tiles of QD_COLW. */
#define QD_LONG (4 * QD_U)
#define QD_COLW 1024   /* (a multiple of every QD_U: 12 KB of scales, reciprocals, zero points) */
#ifndef QD_LONG_ROWS   /* a vector layer may leave them out (code size) */
#define QD_LONG_ROWS 1
#endif

/* Whole rows of a layout whose entries vary along rows of K >= QV_W elements (kdim) go
 * through tiles: 4 rows sharing one row of entries at a time (the last rows of a group
 * repeated), the entries of each column of QV_W loaded once for the 4 (the last column moved
 * back to end at K, so x and y must not overlap). qd_tile_group: for the rows from K-row
 * tt on, the index of their row of entries and how many of them (at most `left`) share it. */
QD_INLINE size_t qd_tile_group(const size_t lay[4], size_t ebase, size_t tt, size_t left,
                               size_t *e)
{
    size_t K = lay[3], g = lay[0] / K, pr = lay[1] ? lay[1] / K : (size_t)-1, in = tt % pr;
    size_t n = g - in % g;
    if (pr - in < n) n = pr - in;
    *e = (lay[1] ? tt / pr * lay[2] : 0) + in / g * K - ebase;
    return n < left ? n : left;
}

/* The rows a tile may take: rows of K elements whose entries vary along the row (kdim), or
 * rows with one entry each (per-axis over an inner size K, or blocks covering a whole last
 * axis of K): 0 when the run has no such rows. *step: the entry of the next row (rowent:
 * + step, wrapping at *wrap; 0: by qd_tile_group). */
QD_INLINE size_t qd_tile_k(size_t blk, size_t row, size_t erow, size_t kdim, size_t *step,
                           size_t *wrap)
{
    *step = *wrap = 0;
    if (kdim > 1) return kdim;
    /* (segments of whole chunks stay in the stretch loop: no faster as tiles) */
    if (row && !erow && row % blk == 0 && row > blk && blk % QD_U) {
        *step = 1;
        *wrap = row / blk;
        return blk;
    }
    if (row && erow && blk >= row) { *step = erow; *wrap = (size_t)-1; return row; }
    return 0;
}

/* The entries of a tile's 4 rows (rows ro[v] from K-row t on) for one-entry rows. */
QD_INLINE void qd_tile_rowent(size_t t, const size_t ro[4], size_t step, size_t wrap,
                              size_t ebase, size_t e[4])
{
    QD_UNROLL
    for (int v = 0; v < 4; v++)
        e[v] = (wrap == (size_t)-1 ? (t + ro[v]) * step : (t + ro[v]) % wrap) - ebase;
}

QD_INLINE qd_pv qd_row_pv(const float *sp, const float *rp, const float *fp, const int32_t *zp,
                          const size_t e[4], unsigned need)
{
    qd_pv pv;
    QD_UNROLL
    for (int v = 0; v < 4; v++) {
        pv.s[v] = qv_set1(sp[e[v]]);
        pv.r[v] = need & QD_R ? qv_set1(rp[e[v]]) : qv_set1(1.0f);
        pv.f[v] = need & QD_F && fp ? qv_set1(fp[e[v]]) : qv_set1(0.0f);
        pv.z[v] = need & QD_Z && zp ? qv_set1_i(zp[e[v]]) : qv_set1_i(0);
    }
    return pv;
}

/* The K columns of one tile's rows ro[v]: the parameters rpv (one entry per row) or, rpv
 * NULL, each column's from entry e on (two inlined copies: the choice stays out of the loop).
 * Quantized codes are staged and copied to their rows (a packed row's vector is not a whole
 * number of bytes apart from the next row's). */
QD_INLINE void qd_tile_cols(const qd_op *o, const char *x, unsigned char *y, size_t K,
                            const size_t ro[4], const qd_pv *rpv, const float *const pp[3],
                            const int32_t *zp, size_t e, unsigned need)
{
    size_t xrow = qd_xo(o, K), yrow = qd_yo(o, K), yv = qd_yo(o, QV_W);
    union { vi v[1]; unsigned char b[4 * 4 * QV_W]; } tmp;
    for (size_t k0 = 0; k0 < K; k0 += QV_W) {
        size_t kk = k0 + QV_W > K ? K - QV_W : k0;
        qd_pv pv = rpv ? *rpv : qd_ent_pv(pp[0], pp[1], pp[2], zp, e + kk, 1, need);
        const char *xv[4] = {x + ro[0] * xrow + qd_xo(o, kk), x + ro[1] * xrow + qd_xo(o, kk),
                             x + ro[2] * xrow + qd_xo(o, kk), x + ro[3] * xrow + qd_xo(o, kk)};
        unsigned char *yr[4] = {y + ro[0] * yrow + qd_yo(o, kk), y + ro[1] * yrow + qd_yo(o, kk),
                                y + ro[2] * yrow + qd_yo(o, kk), y + ro[3] * yrow + qd_yo(o, kk)};
        if (o->dq) {
            qd_chunk_v(o, xv, yr, &pv);
            continue;
        }
        unsigned char *const tv[4] = {tmp.b, tmp.b, tmp.b, tmp.b};
        qd_chunk_v(o, xv, tv, &pv);
        QD_UNROLL
        for (int v = 0; v < 4; v++) memcpy(y + ro[v] * yrow + qd_yo(o, kk), tmp.b + v * yv, yv);
    }
}

/* `rows` rows of K >= QD_U elements that share the entries from e on: per chunk of
 * the row (the last moved back to end at K), its entries loaded once and kept in registers
 * down QD_RB rows at a time. */
#define QD_RB 32
QD_INLINE void qd_qrows(const qd_op *o, const char *x, unsigned char *y, size_t K, size_t rows,
                        const float *const pp[3], const int32_t *zp, size_t e, unsigned need)
{
    size_t xrow = qd_xo(o, K), yrow = qd_yo(o, K);
    for (size_t r0 = 0; r0 < rows; r0 += QD_RB)
        for (size_t k0 = 0; k0 < K; k0 += QD_U) {
            size_t kk = k0 + QD_U > K ? K - QD_U : k0;
            qd_pv pv = qd_run_pv(pp[0], pp[1], pp[2], zp, e + kk, need);
            qd_chunks(o, x + r0 * xrow + qd_xo(o, kk), y + r0 * yrow + qd_yo(o, kk),
                      rows - r0 < QD_RB ? rows - r0 : QD_RB, xrow, yrow, &pv, 0);
        }
}

/* x, y: the first row's input and output byte; t: its row index in the tensor (rows of K). */
QD_INLINE void qd_tile(const qd_op *o, const char *x, unsigned char *y, size_t K, size_t step,
                       size_t wrap, size_t t, size_t rows, const void *P, unsigned need)
{
    int stream = QD_STREAM(o, P);
    size_t lay[4] = {QD_P(o, P, blk), QD_P(o, P, row), QD_P(o, P, erow), K}, e = 0, n;
    const float *pp[3] = {QD_P(o, P, scale), QD_RS(o, P), QD_P(o, P, zpf)};
    const int32_t *zp = QD_P(o, P, zp);
    for (size_t r = 0; r < rows; r += n) {
        n = step ? rows - r : qd_tile_group(lay, QD_P(o, P, ebase), t + r, rows - r, &e);
        if (QD_LONG_ROWS && !step && K >= QD_U) {
            /* Quantizing, and dequantizing rows under QD_LONG: a chunk's entries loaded
             * once, in registers, for every row (a column of chunks down the rows:
             * 1x64x56x56 blocked along channels 2.3x -> 1.5x per-tensor on AVX-512; rows of
             * 196 1.6x -> 1.45x, of 49 dequantized 2.0x -> 1.7x on AVX2, beating tiles).
             * Dequantizing long rows, whose float32 stores fare worse across rows: columns of
             * QD_COLW at a time over the rows, their entries in L1, results from a cache line
             * on (as qd_body's), after a chunk over [0, sft); calls too large for the caches
             * write each row's column into an L1 buffer streamed to y (4096x4096 int4
             * blocked along axis 0: 2.8x -> 1.25x per-tensor on AVX-512, 1.5x -> 1.2x AVX2). */
            size_t xrow = qd_xo(o, K), yrow = qd_yo(o, K);
            size_t sft = ((64 - ((uintptr_t)y & 63)) & 63) / 4;
            union { vi v[1]; unsigned char b[4 * QD_COLW]; } cb;
            if (!QD_ALIGN_STORES || !o->dq || o->ok != QK_O_F32 || (uintptr_t)y % 4 ||
                yrow % 64 || sft % qd_per(o) || stream)
                sft = 0;
            if (!o->dq || K < QD_LONG) {
                qd_qrows(o, x + r * xrow, y + r * yrow, K, n, pp, zp, e, need);
                continue;
            }
            for (size_t c0 = 0; c0 < K; c0 += QD_COLW)
                for (size_t rr = r; rr < r + n; rr++) {
                    /* (the buffer holds [a, b): a row's last chunk may start before c0) */
                    size_t a = c0 + QD_U <= K ? c0 : K - QD_U;
                    size_t b = c0 + QD_COLW < K ? c0 + QD_COLW : K;
                    unsigned char *yr = y + rr * yrow;
                    for (size_t k0 = c0 + sft - (c0 == 0 && sft ? sft : 0);
                         k0 < K && k0 < c0 + QD_COLW + sft; k0 = k0 < sft ? sft : k0 + QD_U) {
                        size_t kk = k0 + QD_U > K ? K - QD_U : k0;
                        qd_pv pv = qd_run_pv(pp[0], pp[1], pp[2], zp, e + kk, need);
                        qd_chunk(o, x + rr * xrow + qd_xo(o, kk),
                                 stream ? cb.b + qd_yo(o, kk - a) : yr + qd_yo(o, kk), &pv);
                    }
                    if (stream) qd_flush(yr + qd_yo(o, a), cb.b, qd_yo(o, b - a));
                }
            continue;
        }
        for (size_t rr = 0; rr < n; rr += 4) {
            size_t ro[4], er[4];
            QD_UNROLL
            for (int v = 0; v < 4; v++) ro[v] = r + (rr + v < n ? rr + v : n - 1);
            if (step) {
                qd_tile_rowent(t, ro, step, wrap, QD_P(o, P, ebase), er);
                qd_pv rpv = qd_row_pv(pp[0], pp[1], pp[2], zp, er, need);
                qd_tile_cols(o, x, y, K, ro, &rpv, pp, zp, e, need);
            } else {
                qd_tile_cols(o, x, y, K, ro, NULL, pp, zp, e, need);
            }
        }
    }
}

/* Elements [a, b) of the run: a scalar head to a packed group, the body, a scalar tail. */
QD_INLINE void qd_piece(const qd_op *o, const char *x, unsigned char *y, size_t a, size_t b,
                        int ovl, const void *P, unsigned need)
{
    unsigned per = qd_per(o);
    size_t h = per > 1 ? (per - (QD_P(o, P, phase) + a) % per) % per : 0, done = 0;
    if (h > b - a) h = b - a;
    QD_SCALAR(o, x, y, a, a + h, P);
    a += h;
    size_t mt = (b - a) / per * per;
    if (mt >= QD_U) {
        qd_src c;
        c.s = QD_P(o, P, scale); c.r = QD_RS(o, P); c.f = QD_P(o, P, zpf); c.z = QD_P(o, P, zp);
        qd_src_init(&c, QD_P(o, P, blk), QD_P(o, P, row), QD_P(o, P, erow), QD_P(o, P, kdim), QD_P(o, P, ebase), QD_P(o, P, pos) + a, mt);
        done = qd_body(o, x + qd_xat(o, P, a), y + qd_yat(o, P, a), mt, ovl, &c, need,
                       QD_STREAM(o, P));
    }
    QD_SCALAR(o, x, y, a + done, b, P);
}

#if QD_SPLIT
QD_NOINLINE void qd_run_any(const qd_op *op, int full, const char *x, unsigned char *y,
                            size_t n, const void *P, unsigned need);
#endif

/* A run of n elements; full: whole rows of a kdim layout (or of one-entry rows) go through
 * tiles. */
QD_INLINE void qd_run(const qd_op *o, int full, const char *x, unsigned char *y, size_t n,
                      const void *P, unsigned need)
{
    unsigned per = qd_per(o);
    size_t np = (QD_P(o, P, phase) + n + per - 1) / per * per;   /* slots of the packed side's bytes */
    int ovl = qd_disjoint(x, o->dq ? qd_xbytes(o->dk, np) : n * qd_xsize(o->xk), y,
                          o->dq ? n * qd_osize(o->ok) : qd_ybytes(o->yk, np));
#if QD_SPLIT
    if (o->uni) {   /* (an entry without block runs inlines runs of one entry only) */
        size_t len;
        qk_entry(QD_P(o, P, blk), QD_P(o, P, pos), QD_P(o, P, row), QD_P(o, P, erow), 1, 0, 0,
                 &len);
        if (QD_P(o, P, kdim) > 1 || len < n) {
            qd_op oc = *o;
            qd_run_any(&oc, full, x, y, n, P, need);
        } else {
            qd_piece(o, x, y, 0, n, ovl, P, need);
        }
        return;
    }
#endif
    size_t lo[2] = {0, n}, hi[2] = {n, n}, step, wrap;   /* what is left around the tiles' rows */
    size_t K = qd_tile_k(QD_P(o, P, blk), QD_P(o, P, row), QD_P(o, P, erow), QD_P(o, P, kdim), &step, &wrap);
    /* Per-axis along a last axis shorter than QD_LONG never takes tiles, whose columns
     * overlap and whose codes are staged: quantized as the rows below, else by PER's chunks
     * over consecutive elements (1.9x -> 1.4x per-tensor for rows of 14 on AVX2, 1.8x ->
     * 1.55x for 56 on AVX-512, against tiles). */
    if (QD_LONG_ROWS && full && !o->dq && ovl && QD_P(o, P, kdim) > 1 && !QD_P(o, P, row) &&
        K < QD_LONG) {
        /* Quantizing per-axis along a last axis of K < QD_LONG: rows of kv = lcm(K, QD_U)
         * elements all have the same entries (the period's, expanded), so they go as long
         * rows whose chunks keep their entries in registers (qd_qrows) */
        size_t kv = qd_lcm(K, QD_U), r0 = (K - QD_P(o, P, pos) % K) % K;
        size_t rows = r0 < n ? (n - r0) / kv : 0;
        if (kv <= QD_EXPN && rows >= 2 && (per == 1 || (QD_P(o, P, phase) + r0) % per == 0)) {
            union { vf align; struct { float s[QD_EXPN], r[QD_EXPN], f[QD_EXPN]; } a; } xp;
            int32_t xz[QD_EXPN];
            const float *sp = QD_P(o, P, scale), *rp = QD_RS(o, P), *fp = QD_P(o, P, zpf);
            const int32_t *zp = QD_P(o, P, zp);
            for (size_t t = 0, k = 0; t < kv; t++, k = k + 1 < K ? k + 1 : 0) {
                size_t en = k - QD_P(o, P, ebase);   /* entry j % K of the row's j = t */
                xp.a.s[t] = sp[en];
                xp.a.r[t] = rp ? rp[en] : 1.0f;
                xp.a.f[t] = fp ? fp[en] : 0.0f;
                xz[t] = zp ? zp[en] : 0;
            }
            const float *const xpp[3] = {xp.a.s, xp.a.r, xp.a.f};
            qd_qrows(o, x + qd_xat(o, P, r0), y + qd_yat(o, P, r0), kv, rows, xpp, xz, 0, need);
            hi[0] = r0;
            lo[1] = r0 + rows * kv;
        }
    } else if (full && K && ovl && !(QD_P(o, P, kdim) > 1 && !QD_P(o, P, row) && K < QD_LONG)) {
        /* the first row that starts in the run, and its rows */
        size_t r0 = (K - QD_P(o, P, pos) % K) % K, rows = r0 < n ? (n - r0) / K : 0;
        if (QD_LONG_ROWS && qd_op_blocks(o) && !step && K < QD_LONG) {
            /* Groups of rows shorter than QD_LONG that share a row of entries (blocks along
             * an inner axis: NCHW channel blocks of 7x7) as super rows of m * K elements, m
             * a power of two: the row's entries expanded m times, each chunk's in registers
             * down the super rows (qd_qrows). Whole chunks where 4-row tiles computed up to a
             * third more and staged their codes, and packed codes of rows of odd length
             * (which tiles cannot take) in whole bytes. Over [sa, sb): a partial first group
             * is left to the pieces, a group of other rows ends them. In the entries that
             * have block runs only (code size: a second inlined qd_qrows per entry). */
            union { vf align; struct { float s[QD_EXPN], r[QD_EXPN], f[QD_EXPN]; } a; } xp;
            int32_t xz[QD_EXPN];
            size_t lay[4] = {QD_P(o, P, blk), QD_P(o, P, row), QD_P(o, P, erow), K}, m = 1;
            size_t e, g, t0 = (QD_P(o, P, pos) + r0) / K, sa = r0, sb = r0;
            const float *sp = QD_P(o, P, scale), *rp = QD_RS(o, P), *fp = QD_P(o, P, zpf);
            const int32_t *zp = QD_P(o, P, zp);
            const float *const xpp[3] = {xp.a.s, xp.a.r, fp ? xp.a.f : NULL};
            while ((m * K < QD_U || (m * K) % per) && 2 * m * K <= QD_EXPN) m *= 2;
            int ok = K >= QV_W && m > 1 && m * K >= QD_U && (m * K) % per == 0;
            for (size_t r = 0; ok && r < rows; r += g) {
                g = qd_tile_group(lay, QD_P(o, P, ebase), t0 + r, rows - r, &e);
                if (g % m || (QD_P(o, P, phase) + r0 + r * K) % per) {
                    if (r) break;
                    sa = sb = r0 + g * K;
                    continue;
                }
                for (size_t t = 0; t < m * K; t += K)   /* (by vectors: K >= QV_W) */
                    for (size_t k = 0; k < K; k += QV_W) {
                        size_t kk = k + QV_W > K ? K - QV_W : k;
                        qv_storeu_f(xp.a.s + t + kk, qv_loadu_f(sp + e + kk));
                        if (need & QD_R) qv_storeu_f(xp.a.r + t + kk, qv_loadu_f(rp + e + kk));
                        if (need & QD_F && fp)
                            qv_storeu_f(xp.a.f + t + kk, qv_loadu_f(fp + e + kk));
                        if (need & QD_Z && zp) qv_storeu_i(xz + t + kk, qv_loadu_i(zp + e + kk));
                    }
                qd_qrows(o, x + qd_xat(o, P, r0 + r * K), y + qd_yat(o, P, r0 + r * K), m * K,
                         g / m, xpp, zp ? xz : NULL, 0, need);
                sb = r0 + (r + g) * K;
            }
            if (sb > sa) {   /* (the rows after them: tiles, as below) */
                hi[0] = sa;
                lo[1] = r0 = sb;
                rows = (n - sb) / K;
            }
        }
        if (rows >= 2 && K >= QV_W &&
            (per == 1 || (K % per == 0 && (QD_P(o, P, phase) + r0) % per == 0))) {
            qd_tile(o, x + qd_xat(o, P, r0), y + qd_yat(o, P, r0), K, step, wrap,
                    (QD_P(o, P, pos) + r0) / K, rows, P, need);
            if (hi[0] > r0) hi[0] = r0;
            lo[1] = r0 + rows * K;
        }
    }
    for (int h = 0; h < 2; h++)   /* (one call site: one inlined copy) */
        if (hi[h] > lo[h]) qd_piece(o, x, y, lo[h], hi[h], ovl, P, need);
}

QD_INLINE void qd_quant2(int xk, int qk, int yk, int sat, int rec, int negs, int full,
                         const void *x, void *y, size_t n, const qk_qparams *p, qd_ckfn ck)
{
    qd_op o;
    o.dq = 0; o.xk = xk; o.qk = qk; o.yk = yk; o.sat = sat; o.rec = rec; o.negs = negs;
    o.dk = o.ok = o.sgn = 0; o.bits = 0; o.h = qv_set1_i(0);
    o.k.ic = qv_qc_init(p->qmin, p->qmax, p->mask);
    o.k.bc = qv_qc_init(0, yk == QK_Y_PE2M1 ? 15 : 255, yk == QK_Y_PE2M1 ? 0x0fu : 0xffu);
    o.generic = 0;
    o.uni = QD_SPLIT && !qd_op_blocks(&o);
    o.ck = ck;
    qd_run(&o, full, (const char *)x, (unsigned char *)y, n, p,
           QD_S | (rec || (QV_FMA && qd_is_int(yk)) ? QD_R : 0u) | (qd_is_int(yk) ? QD_Z : 0u));
}


#if QV_QUARK
/* AMD Quark's int32 / uint32 / float16 / bfloat16 outputs of float32 x (the true quotient:
 * these outputs keep all of it) and int32 / uint32 inputs, over the layer's double halves (vd).
 * B32 outputs: the quotient widened to double, clamped there to [qmin64 - zp, qmax64 - zp]
 * (NaN gives the low bound, as scalar.c's comparison), rounded half to even, plus the zero
 * point, every step exact; uint32 ranges are shifted down by 2^31 for the int32 conversion and
 * the sign bit flipped back. F16 / BF16: q + zpf in float32 (+0 without a zero point), one
 * rounding. B32 inputs: x - zp exact in double (|.| < 2^34; uint32 x read as int32 x - 2^31),
 * one rounding to float32, one product. */
typedef struct qd_qkc {
    vf s, zf;
    vd lo, hi, zb;   /* dequantizing: zb = 2^31 - zp for uint32, else -zp (lo, hi unused) */
    vi flip;
} qd_qkc;

QD_INLINE qd_qkc qd_quark_init(int dq, int yk, const void *P, size_t e)
{
    const qk_qparams *q = (const qk_qparams *)P;
    const int64_t *z64 = QD_PF(dq, P, zp64);
    int64_t zp = z64 ? z64[e] : 0;
    int u = dq ? !((const qk_dparams *)P)->is_signed : q->qmin64 >= 0;
    double sh = u ? 2147483648.0 : 0.0;
    qd_qkc k;
    k.s = qv_set1(QD_PF(dq, P, scale)[e]);
    k.zf = qv_set1(!dq && yk != QK_Y_B32 && q->zpf ? q->zpf[e] : 0.0f);
    k.lo = qv_set1_d(dq ? 0.0 : (double)(q->qmin64 - zp));
    k.hi = qv_set1_d(dq ? 0.0 : (double)(q->qmax64 - zp));
    k.zb = qv_set1_d(dq ? sh - (double)zp : (double)zp - sh);   /* exact: |zp| <= 2^32 */
    k.flip = qv_set1_i(u ? (int32_t)0x80000000u : 0);
    return k;
}

/* One entry per stretch: runs are split where the entry changes, stretches shorter than QD_U
 * go to the scalar kernel. */
QD_INLINE void qd_quark(int dq, int yk, int ok, const void *xv, void *yv, size_t n, const void *P)
{
    const unsigned char *x = (const unsigned char *)xv;
    unsigned char *y = (unsigned char *)yv;
    size_t ys = dq ? qd_osize(ok) : qd_ybytes(yk, 1);
    for (size_t a = 0, len; a < n; a += len) {
        size_t e = qk_entry(QD_PF(dq, P, blk), QD_PF(dq, P, pos), QD_PF(dq, P, row),
                            QD_PF(dq, P, erow), QD_PF(dq, P, kdim), QD_PF(dq, P, ebase), a, &len);
        size_t i = a;
        if (len > n - a) len = n - a;
        if (len >= QD_U) {
            qd_qkc k = qd_quark_init(dq, yk, P, e);
            for (; a + len - i >= QV_W; i += QV_W) {
                if (dq) {
                    vi c = qv_xor_i(qv_loadu_i((const int32_t *)x + i), k.flip);
                    vf d = qv_d2f(qv_add_d(qv_i2d(c, 0), k.zb), qv_add_d(qv_i2d(c, 1), k.zb));
                    qv_store_out(ok, y + i * ys, qv_mul(d, k.s));
                } else if (yk == QK_Y_B32) {
                    vf q = qv_div(qv_loadu_f((const float *)x + i), k.s);
                    vd d0 = qv_clamp_rint_d(qv_f2d(q, 0), k.lo, k.hi);
                    vd d1 = qv_clamp_rint_d(qv_f2d(q, 1), k.lo, k.hi);
                    vi c = qv_d2i(qv_add_d(d0, k.zb), qv_add_d(d1, k.zb));
                    qv_storeu_i(y + i * ys, qv_xor_i(c, k.flip));
                } else {
                    vf q = qv_div(qv_loadu_f((const float *)x + i), k.s);
                    qv_store_out(yk == QK_Y_F16 ? QK_O_F16 : QK_O_BF16, y + i * ys,
                                 qv_add_f(q, k.zf));
                }
            }
        }
        if (dq) qd_dscalar(QK_D_B32, ok, (const char *)x, y, i, a + len, (const qk_dparams *)P);
        else qd_qscalar(QK_X_F32, QK_Q_F32, yk, (const char *)x, y, i, a + len, P);
    }
}
#endif

/* Float codes of yk by the reciprocal form (given reciprocals), else by division. */
#if QV_FP
QD_INLINE int qd_fp_rec(int yk) { return qk_fp_finite(qd_fmt(yk)) || QV_FP8_REC; }
#else
QD_INLINE int qd_fp_rec(int yk) { (void)yk; return 0; }
#endif

/* Loops of their own for the float zero point and the reciprocal form; the rest
 * (reciprocals missing: a scale outside the form's range; a negative scale for the integer
 * outputs) goes to the scalar kernel: real models do not have them, and every variant is a
 * copy of the loops in each table entry. */
QD_INLINE void qd_quant(int xk, int qk, int yk, int full, const void *x, void *y, size_t n,
                        const qk_qparams *p, qd_ckfn ck)
{
    if (n == 0) return;
    if (qd_is_quark(yk)) {
#if QV_QUARK
        qd_quark(0, yk, 0, x, y, n, p);
#endif
    } else if (qd_is_int(yk)) {
        if (QV_FMA && (!p->rscale || p->negs)) qk_quant_scalar(xk, qk, yk, x, y, n, p);
        else qd_quant2(xk, qk, yk, 1, 0, 0, full, x, y, n, p, ck);
    } else {
#if QV_FP
        int fin = qk_fp_finite(qd_fmt(yk)), sat = p->saturate || fin;
        if (fin && p->zpf) qk_quant_scalar(xk, qk, yk, x, y, n, p);   /* float zero points */
        else if (p->rscale && qd_fp_rec(yk)) qd_quant2(xk, qk, yk, sat, 1, 0, full, x, y, n, p, ck);
        else if (!qd_fp_rec(yk)) qd_quant2(xk, qk, yk, sat, 0, 0, full, x, y, n, p, ck);
        else qk_quant_scalar(xk, qk, yk, x, y, n, p);
#endif
    }
}

QD_INLINE void qd_deq2(int dk, int ok, unsigned bits, int sgn, int full, const void *x,
                       void *y, size_t n, const qk_dparams *p, qd_ckfn ck)
{
    qd_op o;
    o.dq = 1; o.xk = o.qk = o.yk = o.sat = o.rec = o.negs = 0;
    o.dk = dk; o.ok = ok; o.sgn = sgn; o.bits = bits;
    o.h = qv_set1_i(sgn == 2 ? 1 << (bits - 1) : 0);
    o.k.ic = o.k.bc = qv_qc_init(0, 255, 0xffu);
    o.generic = 0;
    o.uni = QD_SPLIT && !qd_op_blocks(&o);
    o.ck = ck;
    qd_run(&o, full, (const char *)x, (unsigned char *)y, n, p,
           QD_S | (qd_float_in(dk) ? QD_F : QD_Z));
}

/* Loops of their own for 8- and 16-bit codes by signedness, and one for the sub-byte codes
 * (bits and signedness read at run time: sgn 2 below); the float zero point is a run-time
 * value. */
QD_INLINE void qd_deq(int dk, int ok, int full, const void *x, void *y, size_t n,
                      const qk_dparams *p, qd_ckfn ck)
{
    if (n == 0) return;
    if (dk == QK_D_B32) {
#if QV_QUARK
        qd_quark(1, QK_Y_B32, ok, x, y, n, p);
#endif
    } else if (qd_float_in(dk)) {
        qd_deq2(dk, ok, 8, 0, full, x, y, n, p, ck);
    } else if (((dk == QK_D_B8 && p->bits >= 8) || dk == QK_D_B16) && ok == QK_O_F32) {
        unsigned bits = dk == QK_D_B16 ? 16u : 8u;
        if (p->is_signed) qd_deq2(dk, ok, bits, 1, full, x, y, n, p, ck);
        else qd_deq2(dk, ok, bits, 0, full, x, y, n, p, ck);
    } else {   /* (float16 / bfloat16 results: one loop, whose rounding costs more anyway) */
        unsigned bits = dk == QK_D_B8 ? p->bits : dk == QK_D_B16 ? 16u : dk == QK_D_P4 ? 4u : 2u;
        qd_deq2(dk, ok, bits, p->is_signed != 0 ? 2 : 0, full, x, y, n, p, ck);
    }
}

/* ---- table entries: registry.def, through QK_ENTRIES ---- */

#if QD_SPLIT
/* Every layout but runs of one entry, for the entries without block runs: the driver with the
 * op's fields read at run time (one copy per instruction set), each chunk through the entry's
 * ck. */
QD_NOINLINE void qd_run_any(const qd_op *op, int full, const char *x, unsigned char *y,
                            size_t n, const void *P, unsigned need)
{
    qd_op o = *op;
    o.uni = 0;
    o.generic = 1;
    o.src = op;
    qd_run(&o, full, x, y, n, P, need);
}

/* An entry's chunks for qd_run_any: its kinds constants, the rest of the op (saturation,
 * code bits, signedness and sign bit, the store constants) from o as qd_quant and qd_deq set
 * them; n chunks, chunk t from xv[v] + t xs to yv[v] + t ys, all with the entries pv. */
QD_INLINE void qd_cold_run(int dq, int xk, int qk, int yk, int dk, int ok, int sgn, int sat,
                           int rec, int one, const qd_op *restrict o, const char *const xv[4],
                           unsigned char *const yv[4], size_t n, size_t xs, size_t ys,
                           const qd_pv *restrict pv)
{
    /* locals, which the stores to y cannot alias: read once, not after every store (restrict
     * does as much for the entries) */
    qd_qk k;
    k.ic = o->k.ic;
    k.bc = o->k.bc;
    const vi h = o->h;
    unsigned bits = qd_float_in(dk) ? 8u : o->bits;
    const char *x0 = xv[0], *x1 = xv[1], *x2 = xv[2], *x3 = xv[3];
    unsigned char *y0 = yv[0], *y1 = yv[1], *y2 = yv[2], *y3 = yv[3];
    qd_pv u;   /* one entry: in 3 registers instead of 12 loads a chunk */
    if (one) {
        QD_UNROLL
        for (int v = 0; v < 4; v++) {
            u.s[v] = pv->s[0]; u.r[v] = pv->r[0]; u.f[v] = pv->f[0]; u.z[v] = pv->z[0];
        }
        pv = &u;
    }
    for (size_t t = 0; t < n; t++) {
        const char *xt[4] = {x0 + t * xs, x1 + t * xs, x2 + t * xs, x3 + t * xs};
        unsigned char *yt[4] = {y0 + t * ys, y1 + t * ys, y2 + t * ys, y3 + t * ys};
        if (dq) qd_dchunk(dk, ok, bits, sgn, h, xt, yt, pv);
        else qd_qchunk(xk, qk, yk, sat, rec, 0, xt, yt[0], pv, &k);
    }
}

/* One loop for each signedness and saturation the entry can take (sgn 1: 8- and 16-bit codes
 * to float32 only, as qd_deq sets it). */
QD_INLINE void qd_cold_k(int dq, int xk, int qk, int yk, int dk, int ok, int one, const qd_op *o,
                         const char *const xv[4], unsigned char *const yv[4], size_t n,
                         size_t xs, size_t ys, const qd_pv *pv)
{
    if (dq) {
        if (!qd_float_in(dk) && o->sgn == 2)
            qd_cold_run(1, 0, 0, 0, dk, ok, 2, 0, 0, one, o, xv, yv, n, xs, ys, pv);
        else if ((dk == QK_D_B8 || dk == QK_D_B16) && ok == QK_O_F32 && o->sgn == 1)
            qd_cold_run(1, 0, 0, 0, dk, ok, 1, 0, 0, one, o, xv, yv, n, xs, ys, pv);
        else qd_cold_run(1, 0, 0, 0, dk, ok, 0, 0, 0, one, o, xv, yv, n, xs, ys, pv);
    } else if (qd_is_int(yk)) {
        qd_cold_run(0, xk, qk, yk, 0, 0, 0, 1, 0, one, o, xv, yv, n, xs, ys, pv);
    } else {
        int rec = qd_fp_rec(yk);   /* (qd_quant's choice, a constant of the kind) */
        if (o->sat) qd_cold_run(0, xk, qk, yk, 0, 0, 0, 1, rec, one, o, xv, yv, n, xs, ys, pv);
        else qd_cold_run(0, xk, qk, yk, 0, 0, 0, 0, rec, one, o, xv, yv, n, xs, ys, pv);
    }
}

/* For integer codes, those loops once more for stretches of one entry (16-bit codes, half
 * inputs and results: up to 1.4x). */
QD_INLINE void qd_cold(int dq, int xk, int qk, int yk, int dk, int ok, const qd_op *o,
                       const char *const xv[4], unsigned char *const yv[4], size_t n, size_t xs,
                       size_t ys, const qd_pv *pv, int one)
{
    if (one && (dq ? !qd_float_in(dk) : qd_is_int(yk)))
        qd_cold_k(dq, xk, qk, yk, dk, ok, 1, o, xv, yv, n, xs, ys, pv);
    else qd_cold_k(dq, xk, qk, yk, dk, ok, 0, o, xv, yv, n, xs, ys, pv);
}

#define QD_CKFN(name, dq, xk, qk, yk, dk, ok) \
    QD_NOINLINE void name##_ck(const qd_op *o, const char *const xv[4], \
                               unsigned char *const yv[4], size_t n, size_t xs, size_t ys, \
                               const qd_pv *pv, int one) \
    { qd_cold(dq, xk, qk, yk, dk, ok, o, xv, yv, n, xs, ys, pv, one); }
#define QD_CK(name) name##_ck
#else
#define QD_CKFN(name, dq, xk, qk, yk, dk, ok)
#define QD_CK(name) NULL
#endif

#define QD_QFN(name, xk, qk, yk, full) \
    QD_CKFN(name, 0, xk, qk, yk, 0, 0) \
    static void name(const void *x, void *y, size_t n, const qk_qparams *p) \
    { qd_quant(xk, qk, yk, full, x, y, n, p, QD_CK(name)); }
#define QD_DFN(name, dk, ok, full) \
    QD_CKFN(name, 1, 0, 0, 0, dk, ok) \
    static void name(const void *x, void *y, size_t n, const qk_dparams *p) \
    { qd_deq(dk, ok, full, x, y, n, p, QD_CK(name)); }
#define QD_QSET(name, xk, qk, yk, full) .quant[xk][qk][yk] = name,
#define QD_DSET(name, dk, ok, full) .dequant[dk][ok] = name,

#endif
