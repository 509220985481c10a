/* float32 -> float8 e4m3fn / e5m2 / float4 (one per byte or packed) and back, for the x86
 * kernel files that vectorise them (avx2.c, avx512.c).
 *
 * Not a standalone header: the including file defines its vector layer first (qv_* as for
 * x86_template.h, plus qv_add_f, qv_to_fp and qv_from_fp), then includes this file before
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
#define QF_COLD static __declspec(noinline)
#else
#define QF_INLINE static inline __attribute__((always_inline))
#define QF_COLD static __attribute__((noinline, cold))
#endif

QF_INLINE int qf_fmt_y(int yk)
{
    return yk == QK_Y_E4M3FN ? QK_FP_E4M3FN : yk == QK_Y_E5M2 ? QK_FP_E5M2 : QK_FP_E2M1;
}

QF_INLINE int qf_fmt_d(int dk)
{
    return dk == QK_D_E4M3FN ? QK_FP_E4M3FN : dk == QK_D_E5M2 ? QK_FP_E5M2 : QK_FP_E2M1;
}

/* ---- quantize ---- */

/* The scalar kernel on elements [a, b) of the run; with blk > 1 they share one entry. */
QF_COLD void qf_quant_part(int yk, const float *x, unsigned char *y, size_t a, size_t b,
                           size_t blk, const qk_qparams *p)
{
    qk_qparams q = *p;
    size_t e = a / blk;
    if (a >= b) return;
    q.scale = p->scale + e;
    q.scale64 = p->scale64 ? p->scale64 + e : NULL;
    q.zp = p->zp ? p->zp + e : NULL;
    q.zpf = p->zpf ? p->zpf + e : NULL;
    q.zp64 = p->zp64 ? p->zp64 + e : NULL;
    q.blk = blk == 1 ? 1 : b - a;
    if (yk == QK_Y_PE2M1) {
        q.phase = (unsigned)((p->phase + a) % 2);
        qk_quant_scalar(QK_X_F32, QK_Q_F32, yk, x + a, y + (p->phase + a) / 2, b - a, &q);
    } else {
        qk_quant_scalar(QK_X_F32, QK_Q_F32, yk, x + a, y + a, b - a, &q);
    }
}

/* QV_W codes of x / s (+ zf). */
QF_INLINE vi qf_qvec(int yk, int sat, int has_zf, const float *x, vf s, vf zf)
{
    vf q = qv_div(qv_loadu_f(x), s);   /* the same true division as scalar.c */
    if (has_zf) q = qv_add_f(q, zf);
    return qv_to_fp(q, qf_fmt_y(yk), sat);
}

/* Codes go out through the integer stores: bytes, or nibble pairs for packed float4. */
#define QF_STORE_KIND(yk) ((yk) == QK_Y_PE2M1 ? QK_Y_P4 : QK_Y_B8)
#define QF_YBYTES(yk, m) ((yk) == QK_Y_PE2M1 ? (m) / 2 : (m))

/* Elements [a, b) of entry e; a vector body, the rest scalar. */
QF_INLINE void qf_quant_entry(int yk, int sat, int has_zf, const float *x, unsigned char *y,
                              size_t a, size_t b, size_t e, size_t blk, const qk_qparams *p)
{
    vm mask = qv_mask(yk == QK_Y_PE2M1 ? 0x0fu : 0xffu);
    size_t a0 = a;
    if (yk == QK_Y_PE2M1 && (p->phase + a) % 2 && a < b) a++;   /* a shared first byte */
    size_t m = (b - a) / QV_W * QV_W;
    vf s = qv_set1(p->scale[e]);
    vf zf = qv_set1(has_zf ? p->zpf[e] : 0.0f);
    unsigned char *ya = yk == QK_Y_PE2M1 ? y + (p->phase + a) / 2 : y + a;
    size_t i = 0;
    for (; m - i >= 4 * QV_W; i += 4 * QV_W) {
        const float *xi = x + a + i;
        vi c0 = qf_qvec(yk, sat, has_zf, xi, s, zf);
        vi c1 = qf_qvec(yk, sat, has_zf, xi + QV_W, s, zf);
        vi c2 = qf_qvec(yk, sat, has_zf, xi + 2 * QV_W, s, zf);
        vi c3 = qf_qvec(yk, sat, has_zf, xi + 3 * QV_W, s, zf);
        qv_store4(QF_STORE_KIND(yk), ya + QF_YBYTES(yk, i), c0, c1, c2, c3, mask);
    }
    for (; i < m; i += QV_W)
        qv_store1(QF_STORE_KIND(yk), ya + QF_YBYTES(yk, i),
                  qf_qvec(yk, sat, has_zf, x + a + i, s, zf), mask);
    if (a > a0) qf_quant_part(yk, x, y, a0, a, blk, p);
    if (a + m < b) qf_quant_part(yk, x, y, a + m, b, blk, p);
}

/* blk == 1: one entry per element, the parameter arrays read as vectors. */
QF_INLINE void qf_quant_each(int yk, int sat, int has_zf, const float *x, unsigned char *y,
                             size_t n, const qk_qparams *p)
{
    vm mask = qv_mask(yk == QK_Y_PE2M1 ? 0x0fu : 0xffu);
    size_t a = yk == QK_Y_PE2M1 && p->phase % 2 && n ? 1 : 0;
    size_t m = (n - a) / QV_W * QV_W;
    unsigned char *ya = yk == QK_Y_PE2M1 ? y + (p->phase + a) / 2 : y + a;
    for (size_t i = 0; i < m; i += QV_W) {
        vf zf = has_zf ? qv_loadu_f(p->zpf + a + i) : qv_set1(0.0f);
        qv_store1(QF_STORE_KIND(yk), ya + QF_YBYTES(yk, i),
                  qf_qvec(yk, sat, has_zf, x + a + i, qv_loadu_f(p->scale + a + i), zf), mask);
    }
    if (a) qf_quant_part(yk, x, y, 0, a, 1, p);
    if (a + m < n) qf_quant_part(yk, x, y, a + m, n, 1, p);
}

QF_INLINE void qf_quant_run2(int yk, int sat, int has_zf, const void *xv, void *yv, size_t n,
                             const qk_qparams *p)
{
    const float *x = (const float *)xv;
    unsigned char *y = (unsigned char *)yv;
    size_t blk = p->blk ? p->blk : 1;
    if (n == 0) return;
    if (blk >= n) {
        qf_quant_entry(yk, sat, has_zf, x, y, 0, n, 0, n, p);
    } else if (blk == 1) {
        qf_quant_each(yk, sat, has_zf, x, y, n, p);
    } else if (blk >= QV_W) {
        for (size_t a = 0, e = 0; a < n; a += blk, e++)
            qf_quant_entry(yk, sat, has_zf, x, y, a, n - a < blk ? n : a + blk, e, blk, p);
    } else {
        qk_quant_scalar(QK_X_F32, QK_Q_F32, yk, xv, yv, n, p);   /* small blocks */
    }
}

/* saturate and the float zero point become constants of separate loops */
QF_INLINE void qf_quant_run(int yk, const void *x, void *y, size_t n, const qk_qparams *p)
{
    int sat = p->saturate || yk == QK_Y_E2M1 || yk == QK_Y_PE2M1;
    if (p->zpf) qf_quant_run2(yk, 1, 1, x, y, n, p);   /* float4 only: always saturating */
    else if (sat) qf_quant_run2(yk, 1, 0, x, y, n, p);
    else qf_quant_run2(yk, 0, 0, x, y, n, p);
}

/* ---- dequantize ---- */

QF_COLD void qf_deq_part(int dk, int ok, const unsigned char *x, unsigned char *y, size_t a,
                         size_t b, size_t blk, const qk_dparams *p)
{
    static const size_t osize[QK_NO] = {4, 2, 2, 1};
    qk_dparams q = *p;
    size_t e = a / blk;
    if (a >= b) return;
    q.scale = p->scale + e;
    q.zp = p->zp ? p->zp + e : NULL;
    q.zp64 = p->zp64 ? p->zp64 + e : NULL;
    q.zpf = p->zpf ? p->zpf + e : NULL;
    q.blk = blk == 1 ? 1 : b - a;
    if (dk == QK_D_PE2M1) {
        q.phase = (unsigned)((p->phase + a) % 2);
        qk_dequant_scalar(dk, ok, x + (p->phase + a) / 2, y + a * osize[ok], b - a, &q);
    } else {
        qk_dequant_scalar(dk, ok, x + a, y + a * osize[ok], b - a, &q);
    }
}

/* QV_W values: decoded exactly, times the scale; a NaN x keeps its NaN (as scalar.c). */
QF_INLINE void qf_dvec(int dk, int ok, const unsigned char *x, unsigned char *y, vf s)
{
    vi c = dk == QK_D_PE2M1 ? qv_load_codes(QK_D_P4, 4, 0, x) : qv_load_codes(QK_D_B8, 8, 0, x);
    vf d = qv_from_fp(c, qf_fmt_d(dk));
    qv_store_out(ok, y, qv_keep_nan(d, qv_mul(d, s)));
}

#define QF_XBYTES(dk, m) ((dk) == QK_D_PE2M1 ? (m) / 2 : (m))
#define QF_OSIZE(ok) ((ok) == QK_O_F32 ? 4u : 2u)

QF_INLINE void qf_deq_entry(int dk, int ok, const unsigned char *x, unsigned char *y,
                            size_t a, size_t b, size_t e, size_t blk, const qk_dparams *p)
{
    size_t a0 = a;
    if (dk == QK_D_PE2M1 && (p->phase + a) % 2 && a < b) a++;
    size_t m = (b - a) / QV_W * QV_W;
    const unsigned char *xa = dk == QK_D_PE2M1 ? x + (p->phase + a) / 2 : x + a;
    unsigned char *ya = y + a * QF_OSIZE(ok);
    vf s = qv_set1(p->scale[e]);
    for (size_t i = 0; i < m; i += QV_W)
        qf_dvec(dk, ok, xa + QF_XBYTES(dk, i), ya + i * QF_OSIZE(ok), s);
    if (a > a0) qf_deq_part(dk, ok, x, y, a0, a, blk, p);
    if (a + m < b) qf_deq_part(dk, ok, x, y, a + m, b, blk, p);
}

QF_INLINE void qf_deq_run(int dk, int ok, const void *xv, void *yv, size_t n,
                          const qk_dparams *p)
{
    const unsigned char *x = (const unsigned char *)xv;
    unsigned char *y = (unsigned char *)yv;
    size_t blk = p->blk ? p->blk : 1;
    if (n == 0) return;
    if (blk >= n) {
        qf_deq_entry(dk, ok, x, y, 0, n, 0, n, p);
    } else if (blk == 1) {
        size_t a = dk == QK_D_PE2M1 && p->phase % 2 ? 1 : 0;
        size_t m = (n - a) / QV_W * QV_W;
        const unsigned char *xa = dk == QK_D_PE2M1 ? x + (p->phase + a) / 2 : x + a;
        for (size_t i = 0; i < m; i += QV_W)
            qf_dvec(dk, ok, xa + QF_XBYTES(dk, i), y + (a + i) * QF_OSIZE(ok),
                    qv_loadu_f(p->scale + a + i));
        if (a) qf_deq_part(dk, ok, x, y, 0, a, 1, p);
        if (a + m < n) qf_deq_part(dk, ok, x, y, a + m, n, 1, p);
    } else if (blk >= QV_W) {
        for (size_t a = 0, e = 0; a < n; a += blk, e++)
            qf_deq_entry(dk, ok, x, y, a, n - a < blk ? n : a + blk, e, blk, p);
    } else {
        qk_dequant_scalar(dk, ok, xv, yv, n, p);
    }
}

/* ---- table entries ---- */

#define QF_QFN(yk)                                                                           \
    static void qf_q_##yk(const void *x, void *y, size_t n, const qk_qparams *p)             \
    { qf_quant_run(yk, x, y, n, p); }
QF_QFN(QK_Y_E4M3FN)
QF_QFN(QK_Y_E5M2)
QF_QFN(QK_Y_E2M1)
QF_QFN(QK_Y_PE2M1)

#define QF_DFN(dk, ok)                                                                      \
    static void qf_d_##dk##_##ok(const void *x, void *y, size_t n, const qk_dparams *p)      \
    { qf_deq_run(dk, ok, x, y, n, p); }
#define QF_DROW(dk) QF_DFN(dk, QK_O_F32) QF_DFN(dk, QK_O_F16) QF_DFN(dk, QK_O_BF16)
QF_DROW(QK_D_E4M3FN)
QF_DROW(QK_D_E5M2)
QF_DROW(QK_D_E2M1)
QF_DROW(QK_D_PE2M1)
#define QF_DENTRIES(dk) { qf_d_##dk##_QK_O_F32, qf_d_##dk##_QK_O_F16, qf_d_##dk##_QK_O_BF16, NULL }
#define QF_QNULL4 NULL, NULL, NULL, NULL

/* For x86_template.h's QT_TABLE: the float32 x / float32 quotient row with the float
 * outputs (fnuz formats, 32-bit and Quark outputs stay scalar), and the dequantize rows
 * after the 32-bit one. */
#define QT_F32_ROW                                                                           \
    { qt_q_QK_X_F32_QK_Q_F32_QK_Y_B8, qt_q_QK_X_F32_QK_Q_F32_QK_Y_B16,                        \
      qt_q_QK_X_F32_QK_Q_F32_QK_Y_P4, qt_q_QK_X_F32_QK_Q_F32_QK_Y_P2, qf_q_QK_Y_E4M3FN, NULL, \
      qf_q_QK_Y_E5M2, NULL, qf_q_QK_Y_E2M1, qf_q_QK_Y_PE2M1 }
#define QT_FP_DROWS                                                                          \
    QF_DENTRIES(QK_D_E4M3FN), { QF_QNULL4 }, QF_DENTRIES(QK_D_E5M2), { QF_QNULL4 },          \
    QF_DENTRIES(QK_D_E2M1), QF_DENTRIES(QK_D_PE2M1),

#endif
