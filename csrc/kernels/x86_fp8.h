/* float32 -> float8 e4m3fn / e5m2 / float4 / float6 (one per byte or packed) and back, for the x86
 * kernel files that vectorise them (avx2.c, avx512.c).
 *
 * Not a standalone header: the including file defines its vector layer first (qv_* as for
 * x86_template.h, plus qv_add_f, qv_to_fp, qv_from_fp, qv_fix_recip and the packed float6
 * qv_store6_1 / qv_store6_4 / qv_load6), then includes this file before
 * x86_template.h; the two macros at the end put the entries into that file's QT_TABLE.
 *
 * The driver is simpler than x86_template.h's: per parameter entry a vector body, with the
 * partial vectors and the odd nibble at either end of packed data left to the scalar kernel
 * (qk_quant_scalar / qk_dequant_scalar on a sub-run), which is the reference anyway. Blocks
 * of 2 .. QV_W-1 elements go to the scalar kernel whole; one entry per element (blk = 1)
 * reads the parameter arrays as vectors. */
#ifndef QSIMD_X86_FP8_H
#define QSIMD_X86_FP8_H

#include <string.h>

#include "kernels.h"
#include "convert.h"

#if defined(_MSC_VER) && !defined(__clang__)
#define QF_INLINE static __forceinline
#define QF_NOINLINE static __declspec(noinline)
#define QF_COLD static __declspec(noinline)
#else
#define QF_INLINE static inline __attribute__((always_inline))
#define QF_NOINLINE static __attribute__((noinline))
#define QF_COLD static __attribute__((noinline, cold))
#endif

QF_INLINE int qf_fmt_y(int yk)
{
    return yk == QK_Y_E4M3FN ? QK_FP_E4M3FN : yk == QK_Y_E5M2 ? QK_FP_E5M2
           : yk == QK_Y_E2M3 || yk == QK_Y_PE2M3 ? QK_FP_E2M3
           : yk == QK_Y_E3M2 || yk == QK_Y_PE3M2 ? QK_FP_E3M2 : QK_FP_E2M1;
}

QF_INLINE int qf_fmt_d(int dk)
{
    return dk == QK_D_E4M3FN ? QK_FP_E4M3FN : dk == QK_D_E5M2 ? QK_FP_E5M2
           : dk == QK_D_E2M3 || dk == QK_D_PE2M3 ? QK_FP_E2M3
           : dk == QK_D_E3M2 || dk == QK_D_PE3M2 ? QK_FP_E3M2 : QK_FP_E2M1;
}

/* Packed layouts: elements per group and the group's bytes (float4: 2 in 1, float6: 4 in
 * 3); vector bodies start on a group boundary, so a vector's QV_W codes fill whole groups. */
QF_INLINE int qf_p6_y(int yk) { return yk == QK_Y_PE2M3 || yk == QK_Y_PE3M2; }
QF_INLINE int qf_p6_d(int dk) { return dk == QK_D_PE2M3 || dk == QK_D_PE3M2; }
QF_INLINE size_t qf_per_y(int yk) { return yk == QK_Y_PE2M1 ? 2 : qf_p6_y(yk) ? 4 : 1; }
QF_INLINE size_t qf_per_d(int dk) { return dk == QK_D_PE2M1 ? 2 : qf_p6_d(dk) ? 4 : 1; }
/* bytes of m elements from a group boundary (m a multiple of the group) */
QF_INLINE size_t qf_gbytes(size_t per, size_t m) { return per == 2 ? m / 2 : per == 4 ? m / 4 * 3 : m; }
/* AMD Quark's float16 / bfloat16 inputs: two bytes per element, no packing */
QF_INLINE int qf_h_d(int dk) { return dk == QK_D_F16 || dk == QK_D_BF16; }
/* the byte holding (the group of) slot `slot` counted from the start of packed data */
QF_INLINE size_t qf_goff(size_t per, size_t slot)
{
    return per == 2 ? slot / 2 : per == 4 ? slot / 4 * 3 : slot;
}

/* ---- quantize ---- */

/* The scalar kernel on elements [a, b) of the run; with blk > 1 they share one entry. */
QF_COLD void qf_quant_part(int yk, const float *x, unsigned char *y, size_t a, size_t b,
                           size_t blk, const qk_qparams *p)
{
    if (a >= b) return;
    qk_qparams q = qk_qparams_at(p, a / blk);
    q.blk = blk == 1 ? 1 : b - a;
    if (qf_per_y(yk) > 1) {
        size_t per = qf_per_y(yk);
        q.phase = (unsigned)((p->phase + a) % per);
        qk_quant_scalar(QK_X_F32, QK_Q_F32, yk, x + a, y + qf_goff(per, p->phase + a), b - a,
                        &q);
    } else {
        qk_quant_scalar(QK_X_F32, QK_Q_F32, yk, x + a, y + a, b - a, &q);
    }
}

/* QV_W codes of x / s (+ zf). rec (float4 / float6 without a zero point, scales in
 * qk_recip's range): the exact reciprocal form with r = 1/s, which rounds to the same code as
 * the true quotient (docs/EXACT-DIVISION.md); where it gives +-0 or NaN (x = +-0, +-inf, NaN
 * or a quotient that rounds to zero anyway) x * r is used instead, which has the quotient's
 * sign of zero, its infinity and x's NaN. Otherwise the same true division as scalar.c. */
QF_INLINE vi qf_qvec(int yk, int sat, int has_zf, int rec, const float *x, vf s, vf r, vf zf)
{
    vf xv = qv_loadu_f(x), q;
#if defined(QV_HAVE_F6)
    if (qf_fmt_y(yk) == QK_FP_E2M3 || qf_fmt_y(yk) == QK_FP_E3M2) {
        /* float6: the magnitude from q1 (NaN for x = +-inf: saturates), the sign and NaN from
         * q0 = x * r, which has the quotient's signed zero and x's NaN */
        if (rec) {
#if defined(QV_HAVE_F6R)
            return qv_f6_rec(xv, s, r, qf_fmt_y(yk), NULL);   /* r is -1/s (qf_rvec) */
#else
            vf q0 = qv_mul(xv, r);
            return qv_to_f6(qv_fmadd(qv_fnmadd(q0, s, xv), r, q0), q0, qf_fmt_y(yk));
#endif
        }
        q = qv_div(xv, s);
        if (has_zf) q = qv_add_f(q, zf);
        return qv_to_f6(q, q, qf_fmt_y(yk));
    }
#endif
    if (rec) {
        vf q0 = qv_mul(xv, r);
        q = qv_fix_recip(qv_fmadd(qv_fnmadd(q0, s, xv), r, q0), q0);
    } else {
        q = qv_div(xv, s);
    }
    if (has_zf) q = qv_add_f(q, zf);
    return qv_to_fp(q, qf_fmt_y(yk), sat);
}

/* The reciprocals as qf_qvec takes them: negated for a vector layer's qv_f6_rec. */
QF_INLINE vf qf_rvec(int yk, vf r)
{
#if defined(QV_HAVE_F6R)
    if (qf_fmt_y(yk) == QK_FP_E2M3 || qf_fmt_y(yk) == QK_FP_E3M2) return qv_mul(r, qv_set1(-1.0f));
#else
    (void)yk;
#endif
    return r;
}

/* Codes go out through the integer stores: bytes, or nibble pairs for packed float4;
 * packed float6 through the vector layer's qv_store6_1 / qv_store6_4. */
#define QF_STORE_KIND(yk) ((yk) == QK_Y_PE2M1 ? QK_Y_P4 : QK_Y_B8)
#define QF_YBYTES(yk, m) qf_gbytes(qf_per_y(yk), (m))

QF_INLINE void qf_store1(int yk, unsigned char *y, vi c, vm mask)
{
    if (qf_p6_y(yk)) qv_store6_1(y, c);
    else qv_store1(QF_STORE_KIND(yk), y, c, mask);
}

/* Elements per buffer of qf_quant_entry's streamed packed float6 output: 3072 bytes, 48
 * cache lines. */
#define QF_NT 4096

/* Elements [a, b) of entry e; a vector body, the rest scalar. */
QF_INLINE void qf_quant_entry(int yk, int sat, int has_zf, int rec, const float *x,
                              unsigned char *y, size_t a, size_t b, size_t e, size_t blk,
                              const qk_qparams *p)
{
    vm mask = qv_mask(yk == QK_Y_PE2M1 ? 0x0fu : 0xffu);
    size_t a0 = a, per = qf_per_y(yk);
    if (per > 1 && (p->phase + a) % per) {   /* a shared first byte / group */
        size_t k = per - (p->phase + a) % per;
        a = b - a < k ? b : a + k;
    }
    size_t m = (b - a) / QV_W * QV_W;
    vf s = qv_set1(p->scale[e]);
    vf zf = qv_set1(has_zf ? p->zpf[e] : 0.0f);
    vf r = qf_rvec(yk, qv_set1(rec ? p->rscale[e] : 0.0f));
    unsigned char *ya = y + qf_goff(per, per > 1 ? p->phase + a : a);
    /* Packed float6 by the reciprocal form in calls marked p->stream (x86_template.h's
     * rule), AVX-512 only (AVX2 measured compute-bound there): from the first cache line
     * boundary, [h, nt) goes QF_NT elements at a time through an L1 buffer, streamed out a
     * line at a time; the rest is stored as usual. */
    size_t i = 0, h = m, nt = 0, i0 = 0;
    union { vi v[1]; unsigned char b[QF_NT / 4 * 3 + 64]; } buf;
    if (QV_W == 16 && qf_p6_y(yk) && rec && p->stream && m >= 2 * QF_NT) {
        for (h = 0; h < 64 * QV_W && (uintptr_t)(ya + QF_YBYTES(yk, h)) % 64; h += 4 * QV_W) {}
        if (h < 64 * QV_W) nt = h + (m - h) / QF_NT * QF_NT;
        else h = m;
    }
    while (m - i >= 4 * QV_W) {
        int tobuf = i >= h && i < nt;   /* one inlined copy of the block loop for both */
        size_t end = tobuf ? i + QF_NT : i < h ? h : m;
        unsigned char *yd = tobuf ? buf.b : ya + QF_YBYTES(yk, i);
        for (i0 = i; end - i >= 4 * QV_W; i += 4 * QV_W) {
            const float *xi = x + a + i;
            unsigned char *yi = yd + QF_YBYTES(yk, i - i0);
            /* packed float6: a following block of the same region (or the buffer's slack)
             * takes the junk of a full-width store */
            int full = tobuf || end - i >= 8 * QV_W;
#if defined(QV_HAVE_F6R)
            if (qf_p6_y(yk) && rec) {   /* magnitudes; the store adds the signs of q0 */
                int fmt = qf_fmt_y(yk);
                vi q0, q1, q2, q3;
                vi c0 = qv_f6_rec(qv_loadu_f(xi), s, r, fmt, &q0);
                vi c1 = qv_f6_rec(qv_loadu_f(xi + QV_W), s, r, fmt, &q1);
                vi c2 = qv_f6_rec(qv_loadu_f(xi + 2 * QV_W), s, r, fmt, &q2);
                vi c3 = qv_f6_rec(qv_loadu_f(xi + 3 * QV_W), s, r, fmt, &q3);
                qv_store6_4(yi, c0, c1, c2, c3, q0, q1, q2, q3, full);
                continue;
            }
#endif
            vi c0 = qf_qvec(yk, sat, has_zf, rec, xi, s, r, zf);
            vi c1 = qf_qvec(yk, sat, has_zf, rec, xi + QV_W, s, r, zf);
            vi c2 = qf_qvec(yk, sat, has_zf, rec, xi + 2 * QV_W, s, r, zf);
            vi c3 = qf_qvec(yk, sat, has_zf, rec, xi + 3 * QV_W, s, r, zf);
            if (qf_p6_y(yk)) {   /* the codes have their signs */
                vi ones = qv_set1_i(-1);
                qv_store6_4(yi, c0, c1, c2, c3, ones, ones, ones, ones, full);
            } else {
                qv_store4(QF_STORE_KIND(yk), yi, c0, c1, c2, c3, mask);
            }
        }
        if (tobuf)
            for (size_t k = 0; k < QF_NT / 4 * 3; k += 64)
                qv_stream64(ya + QF_YBYTES(yk, i0) + k, buf.b + k);
    }
    for (; i < m; i += QV_W)
        qf_store1(yk, ya + QF_YBYTES(yk, i), qf_qvec(yk, sat, has_zf, rec, x + a + i, s, r, zf),
                  mask);
    if (a > a0) qf_quant_part(yk, x, y, a0, a, blk, p);
    if (a + m < b) qf_quant_part(yk, x, y, a + m, b, blk, p);
}

/* blk == 1: one entry per element, the parameter arrays read as vectors. */
QF_INLINE void qf_quant_each(int yk, int sat, int has_zf, int rec, const float *x,
                             unsigned char *y, size_t n, const qk_qparams *p)
{
    vm mask = qv_mask(yk == QK_Y_PE2M1 ? 0x0fu : 0xffu);
    size_t per = qf_per_y(yk), a = per > 1 && p->phase % per ? per - p->phase % per : 0;
    if (a > n) a = n;
    size_t m = (n - a) / QV_W * QV_W;
    unsigned char *ya = y + qf_goff(per, per > 1 ? p->phase + a : a);
    for (size_t i = 0; i < m; i += QV_W) {
        vf zf = has_zf ? qv_loadu_f(p->zpf + a + i) : qv_set1(0.0f);
        vf r = rec ? qf_rvec(yk, qv_loadu_f(p->rscale + a + i)) : qv_set1(0.0f);
        qf_store1(yk, ya + QF_YBYTES(yk, i),
                  qf_qvec(yk, sat, has_zf, rec, x + a + i, qv_loadu_f(p->scale + a + i), r, zf),
                  mask);
    }
    if (a) qf_quant_part(yk, x, y, 0, a, 1, p);
    if (a + m < n) qf_quant_part(yk, x, y, a + m, n, 1, p);
}

QF_INLINE void qf_quant_run2(int yk, int sat, int has_zf, int rec, const void *xv, void *yv,
                             size_t n, const qk_qparams *p)
{
    const float *x = (const float *)xv;
    unsigned char *y = (unsigned char *)yv;
    size_t blk = p->blk ? p->blk : 1;
    if (n == 0) return;
    /* one inlined copy of the entry loop: a single entry (blk >= n) is its first iteration */
    if (blk == 1 && n > 1) {
        qf_quant_each(yk, sat, has_zf, rec, x, y, n, p);
    } else if (blk >= QV_W || blk >= n) {
        for (size_t a = 0, e = 0; a < n; a += blk, e++)
            qf_quant_entry(yk, sat, has_zf, rec, x, y, a, n - a < blk ? n : a + blk, e, blk, p);
    } else {
        qk_quant_scalar(QK_X_F32, QK_Q_F32, yk, xv, yv, n, p);   /* small blocks */
    }
}

/* Float8 by the reciprocal form where the vector layer asks for it (QV_FP8_REC: AVX-512,
 * whose table conversion leaves room for the form's extra operations; AVX2's integer one is
 * bound by its ALU ports, where vdivps runs beside them and measured faster). */
#if !defined(QV_FP8_REC)
#define QV_FP8_REC 0
#endif

/* saturate and the float zero point become constants of separate loops */
QF_INLINE void qf_quant_run(int yk, const void *x, void *y, size_t n, const qk_qparams *p)
{
    int fin = qk_fp_finite(qf_fmt_y(yk)), sat = p->saturate || fin;
    if (fin && p->zpf) {   /* float8 has no zero point */
        qf_quant_run2(yk, 1, 1, 0, x, y, n, p);
    } else if (p->rscale && (fin || QV_FP8_REC)) {
        if (sat) qf_quant_run2(yk, 1, 0, 1, x, y, n, p);
        else qf_quant_run2(yk, 0, 0, 1, x, y, n, p);   /* float8 only */
    } else if (fin || !QV_FP8_REC) {
        if (sat) qf_quant_run2(yk, 1, 0, 0, x, y, n, p);
        else qf_quant_run2(yk, 0, 0, 0, x, y, n, p);
    } else {
        /* float8 with a scale outside qk_recip's range (below 2^-83 or above 2^100): rare
         * enough for the scalar kernel, which keeps one SIMD loop per type and saturation */
        qk_quant_scalar(QK_X_F32, QK_Q_F32, yk, x, y, n, p);
    }
}

/* ---- dequantize ---- */

QF_COLD void qf_deq_part(int dk, int ok, const unsigned char *x, unsigned char *y, size_t a,
                         size_t b, size_t blk, const qk_dparams *p)
{
    static const size_t osize[QK_NO] = {4, 2, 2, 1};
    if (a >= b) return;
    qk_dparams q = qk_dparams_at(p, a / blk);
    q.blk = blk == 1 ? 1 : b - a;
    if (qf_per_d(dk) > 1) {
        size_t per = qf_per_d(dk);
        q.phase = (unsigned)((p->phase + a) % per);
        qk_dequant_scalar(dk, ok, x + qf_goff(per, p->phase + a), y + a * osize[ok], b - a, &q);
    } else {
        qk_dequant_scalar(dk, ok, x + (qf_h_d(dk) ? 2 * a : a), y + a * osize[ok], b - a, &q);
    }
}

/* QV_W values: decoded exactly, minus a float6 zero point (nzf = -zpf: x - z is x + -z
 * exactly), times the scale; a NaN x keeps its NaN (as scalar.c). */
QF_INLINE void qf_dvec(int dk, int ok, int has_zf, const unsigned char *x, unsigned char *y,
                       vf s, vf nzf)
{
    vf d;
    if (qf_h_d(dk)) {   /* widening is exact */
        d = qv_load_x(dk == QK_D_F16 ? QK_X_F16 : QK_X_BF16, x);
    } else {
        vi c = dk == QK_D_PE2M1 ? qv_load_codes(QK_D_P4, 4, 0, x)
               : qf_p6_d(dk) ? qv_load6(x) : qv_load_codes(QK_D_B8, 8, 0, x);
        d = qv_from_fp(c, qf_fmt_d(dk));
    }
    if (has_zf) d = qv_add_f(d, nzf);
    else if (dk == QK_D_BF16) d = qv_quiet_nan(d);   /* as the subtraction would */
    qv_store_out(ok, y, qv_keep_nan(d, qv_mul(d, s)));
}

#define QF_XBYTES(dk, m) (qf_h_d(dk) ? 2 * (m) : qf_gbytes(qf_per_d(dk), (m)))
/* the byte of element (slot) `i` */
#define QF_XOFF(dk, per, i) (qf_h_d(dk) ? 2 * (i) : qf_goff((per), (i)))
#define QF_OSIZE(ok) ((ok) == QK_O_F32 ? 4u : 2u)

/* float16 / bfloat16 -> float32 runs too large for the caches: m (a multiple of
 * QT_NT_LINE / 4) values by non-temporal stores from an L1 buffer, as x86_template.h's
 * single-scale runs; one copy per instruction set, the kinds as arguments. */
QF_NOINLINE void qf_dstream(int dk, int has_zf, const unsigned char *x, unsigned char *y,
                            size_t m, vf s, vf nzf)
{
    union { vf v[QT_NT_LINE / sizeof(vf)]; unsigned char b[QT_NT_LINE]; } buf;
    for (size_t i = 0; i < m; i += QT_NT_LINE / 4) {
        for (size_t k = 0; k < QT_NT_LINE / 4; k += QV_W)
            qf_dvec(dk, QK_O_F32, has_zf, x + 2 * (i + k), buf.b + 4 * k, s, nzf);
        for (size_t k = 0; k < QT_NT_LINE; k += 64) qv_stream64(y + 4 * i + k, buf.b + k);
    }
}

QF_INLINE void qf_deq_entry(int dk, int ok, int has_zf, const unsigned char *x,
                            unsigned char *y, size_t a, size_t b, size_t e, size_t blk,
                            const qk_dparams *p)
{
    size_t a0 = a, per = qf_per_d(dk);
    if (per > 1 && (p->phase + a) % per) {
        size_t k = per - (p->phase + a) % per;
        a = b - a < k ? b : a + k;
    }
    const int wide = qf_h_d(dk) && ok == QK_O_F32;   /* float16 / bfloat16 -> float32 */
    if (wide && b - a >= QT_DALIGN_MIN && (uintptr_t)y % 4 == 0)
        a += ((64 - ((uintptr_t)(y + 4 * a) & 63)) & 63) / 4;   /* to a cache line */
    size_t m = (b - a) / QV_W * QV_W, i = 0;
    const unsigned char *xa = x + QF_XOFF(dk, per, per > 1 ? p->phase + a : a);
    unsigned char *ya = y + a * QF_OSIZE(ok);
    vf s = qv_set1(p->scale[e]);
    vf nzf = qv_set1(has_zf ? -p->zpf[e] : 0.0f);
    if (wide && p->stream && m * 4 >= QT_NT_MIN &&
        (uintptr_t)ya % 64 == 0 && qt_disjoint(xa, 2 * m, ya, 4 * m)) {
        i = m / (QT_NT_LINE / 4) * (QT_NT_LINE / 4);
        qf_dstream(dk, has_zf, xa, ya, i, s, nzf);
    }
    for (; i < m; i += QV_W)
        qf_dvec(dk, ok, has_zf, xa + QF_XBYTES(dk, i), ya + i * QF_OSIZE(ok), s, nzf);
    if (a > a0) qf_deq_part(dk, ok, x, y, a0, a, blk, p);
    if (a + m < b) qf_deq_part(dk, ok, x, y, a + m, b, blk, p);
}

QF_INLINE void qf_deq_run2(int dk, int ok, int has_zf, const void *xv, void *yv, size_t n,
                           const qk_dparams *p)
{
    const unsigned char *x = (const unsigned char *)xv;
    unsigned char *y = (unsigned char *)yv;
    size_t blk = p->blk ? p->blk : 1;
    if (n == 0) return;
    if (blk == 1 && n > 1) {
        size_t per = qf_per_d(dk), a = per > 1 && p->phase % per ? per - p->phase % per : 0;
        if (a > n) a = n;
        size_t m = (n - a) / QV_W * QV_W;
        const unsigned char *xa = x + QF_XOFF(dk, per, per > 1 ? p->phase + a : a);
        for (size_t i = 0; i < m; i += QV_W) {
            vf nzf = has_zf ? qv_mul(qv_loadu_f(p->zpf + a + i), qv_set1(-1.0f)) : qv_set1(0.0f);
            qf_dvec(dk, ok, has_zf, xa + QF_XBYTES(dk, i), y + (a + i) * QF_OSIZE(ok),
                    qv_loadu_f(p->scale + a + i), nzf);
        }
        if (a) qf_deq_part(dk, ok, x, y, 0, a, 1, p);
        if (a + m < n) qf_deq_part(dk, ok, x, y, a + m, n, 1, p);
    } else if (blk >= QV_W || blk >= n) {   /* one inlined copy, as for quantize */
        for (size_t a = 0, e = 0; a < n; a += blk, e++)
            qf_deq_entry(dk, ok, has_zf, x, y, a, n - a < blk ? n : a + blk, e, blk, p);
    } else {
        qk_dequant_scalar(dk, ok, xv, yv, n, p);
    }
}

/* float6 and Quark float16 / bfloat16 zero points (the float input kinds that have them) get
 * their own loops */
QF_INLINE void qf_deq_run(int dk, int ok, const void *x, void *y, size_t n, const qk_dparams *p)
{
    if (p->zpf) qf_deq_run2(dk, ok, 1, x, y, n, p);
    else qf_deq_run2(dk, ok, 0, x, y, n, p);
}

/* ---- table entries ---- */

#define QF_QFN(yk)                                                                           \
    static void QT_N(f_q_##yk)(const void *x, void *y, size_t n, const qk_qparams *p)       \
    { qf_quant_run(yk, x, y, n, p); }
QF_QFN(QK_Y_E4M3FN)
QF_QFN(QK_Y_E5M2)
QF_QFN(QK_Y_E2M1)
QF_QFN(QK_Y_PE2M1)
QF_QFN(QK_Y_E2M3)
QF_QFN(QK_Y_PE2M3)
QF_QFN(QK_Y_E3M2)
QF_QFN(QK_Y_PE3M2)

#define QF_DFN(dk, ok)                                                                      \
    static void QT_N(f_d_##dk##_##ok)(const void *x, void *y, size_t n, const qk_dparams *p) \
    { qf_deq_run(dk, ok, x, y, n, p); }
#define QF_DROW(dk) QF_DFN(dk, QK_O_F32) QF_DFN(dk, QK_O_F16) QF_DFN(dk, QK_O_BF16)
QF_DROW(QK_D_E4M3FN)
QF_DROW(QK_D_E5M2)
QF_DROW(QK_D_E2M1)
QF_DROW(QK_D_PE2M1)
QF_DROW(QK_D_E2M3)
QF_DROW(QK_D_PE2M3)
QF_DROW(QK_D_E3M2)
QF_DROW(QK_D_PE3M2)
QF_DROW(QK_D_F16)
QF_DROW(QK_D_BF16)
#define QF_DENTRIES(dk) { QT_N(f_d_##dk##_QK_O_F32), QT_N(f_d_##dk##_QK_O_F16), \
                          QT_N(f_d_##dk##_QK_O_BF16), NULL }
#define QF_QNULL4 NULL, NULL, NULL, NULL

/* For x86_template.h's QT_TABLE: the float32 x / float32 quotient row with the float
 * outputs (fnuz formats, 32-bit and Quark outputs stay scalar), and the dequantize rows
 * after the 32-bit one. */
/* QT_QUARK_QENTRIES: the B32 / F16 / BF16 slots, from x86_quark.h (included next by the same
 * files; the row expands where QT_TABLE is used). */
#define QT_F32_ROW                                                                           \
    { QT_N(q_QK_X_F32_QK_Q_F32_QK_Y_B8), QT_N(q_QK_X_F32_QK_Q_F32_QK_Y_B16),                  \
      QT_N(q_QK_X_F32_QK_Q_F32_QK_Y_P4), QT_N(q_QK_X_F32_QK_Q_F32_QK_Y_P2),                   \
      QT_N(f_q_QK_Y_E4M3FN), NULL, QT_N(f_q_QK_Y_E5M2), NULL, QT_N(f_q_QK_Y_E2M1),            \
      QT_N(f_q_QK_Y_PE2M1), QT_QUARK_QENTRIES, QT_N(f_q_QK_Y_E2M3), QT_N(f_q_QK_Y_PE2M3),      \
      QT_N(f_q_QK_Y_E3M2), QT_N(f_q_QK_Y_PE3M2) }
#define QT_FP_DROWS                                                                          \
    QF_DENTRIES(QK_D_E4M3FN), { QF_QNULL4 }, QF_DENTRIES(QK_D_E5M2), { QF_QNULL4 },          \
    QF_DENTRIES(QK_D_E2M1), QF_DENTRIES(QK_D_PE2M1), QF_DENTRIES(QK_D_F16),                  \
    QF_DENTRIES(QK_D_BF16),                                                                  \
    QF_DENTRIES(QK_D_E2M3), QF_DENTRIES(QK_D_PE2M3), QF_DENTRIES(QK_D_E3M2),                 \
    QF_DENTRIES(QK_D_PE3M2),

#endif
