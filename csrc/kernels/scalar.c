/* Scalar kernels: the complete reference table. Every SIMD table is tested against it.
 * Written for clarity first: one generic loop per operator, with the per-type choices made
 * by switches that the branch predictor resolves once per run. */
#include "kernels.h"
#include "convert.h"

QK_ALWAYS_INLINE float load_xf(int xk, const void *x, size_t i)
{
    switch (xk) {
    case QK_X_F32: return ((const float *)x)[i];
    case QK_X_F16: return qk_f16_to_f32(((const uint16_t *)x)[i]);
    case QK_X_BF16: return qk_bf16_to_f32(((const uint16_t *)x)[i]);
    default: return (float)((const int32_t *)x)[i];   /* int32 under a float precision */
    }
}

QK_ALWAYS_INLINE double load_xd(int xk, const void *x, size_t i)
{
    if (xk == QK_X_I32) return (double)((const int32_t *)x)[i];
    return (double)load_xf(xk, x, i);   /* every float input widens exactly */
}

/* Write the code r (already inside [qmin, qmax]) as element i of the output. */
QK_ALWAYS_INLINE void store_q(int yk, void *y, size_t i, int32_t r, const qk_qparams *p)
{
    uint32_t u = (uint32_t)r;   /* two's complement bits, well defined for negative r */
    switch (yk) {
    case QK_Y_B8: ((uint8_t *)y)[i] = (uint8_t)(u & p->mask); break;
    case QK_Y_B16: ((uint16_t *)y)[i] = (uint16_t)u; break;
    default: {
        unsigned bits = yk == QK_Y_P4 ? 4u : 2u, per = 8u / bits;
        size_t slot = p->phase + i;
        unsigned sh = (unsigned)(slot % per) * bits, m = (1u << bits) - 1u;
        uint8_t *b = (uint8_t *)y + slot / per;
        *b = (uint8_t)((*b & ~(m << sh)) | ((u & m) << sh));
    }
    }
}

/* The quotient x[i] / scale in its precision (docs/CONTRACT.md rule 1); QK_Q_F64 is handled
 * by the callers. */
QK_ALWAYS_INLINE float quot_f(int xk, int qk, const void *x, size_t i, float s)
{
    float v = load_xf(xk, x, i);
    if (qk == QK_Q_F16) return qk_round_f16(qk_round_f16(v) / s);
    if (qk == QK_Q_BF16) return qk_round_bf16(qk_round_bf16(v) / s);
    return v / s;
}

QK_ALWAYS_INLINE void quant_int(int xk, int qk, int yk, const void *x, void *y, size_t n,
                      const qk_qparams *p)
{
    for (size_t start = 0, len; start < n; start += len) {
        size_t e = QK_QENTRY(p, start, &len), end = n - start < len ? n : start + len;
        int32_t zp = p->zp ? p->zp[e] : 0;
        if (qk == QK_Q_F64) {
            double s = p->scale64[e];
            double lo = (double)p->qmin - zp, hi = (double)p->qmax - zp;
            for (size_t i = start; i < end; i++) {
                double q = load_xd(xk, x, i) / s;
                q = q > lo ? q : lo;   /* NaN fails the test and lands on qmin */
                q = q < hi ? q : hi;
                store_q(yk, y, i, (int32_t)qk_rint_small64(q) + zp, p);
            }
            continue;
        }
        float s = p->scale[e];
        float lo = (float)(p->qmin - zp), hi = (float)(p->qmax - zp);
        for (size_t i = start; i < end; i++) {
            float q = quot_f(xk, qk, x, i, s);
            q = q > lo ? q : lo;
            q = q < hi ? q : hi;
            store_q(yk, y, i, (int32_t)qk_rint_small(q) + zp, p);
        }
    }
}

/* int32 / uint32: clamp in double, where qmax - zp (up to 2^33) is exact, so 2^31 never
 * wraps; the integer is formed only after the clamp. */
QK_ALWAYS_INLINE void quant_b32(int xk, int qk, const void *x, void *y, size_t n, const qk_qparams *p)
{
    for (size_t start = 0, len; start < n; start += len) {
        size_t e = QK_QENTRY(p, start, &len), end = n - start < len ? n : start + len;
        int64_t zp = p->zp64 ? p->zp64[e] : 0;
        double lo = (double)(p->qmin64 - zp), hi = (double)(p->qmax64 - zp);
        for (size_t i = start; i < end; i++) {
            double q = qk == QK_Q_F64 ? load_xd(xk, x, i) / p->scale64[e]
                                      : (double)quot_f(xk, qk, x, i, p->scale[e]);
            q = q > lo ? q : lo;
            q = q < hi ? q : hi;
            int64_t r = (int64_t)qk_rint_small64(q) + zp;
            ((uint32_t *)y)[i] = (uint32_t)r;   /* modulo 2^32: the two's complement bits */
        }
    }
}

QK_ALWAYS_INLINE int fp_format(int yk)
{
    switch (yk) {
    case QK_Y_E4M3FN: return QK_FP_E4M3FN;
    case QK_Y_E4M3FNUZ: return QK_FP_E4M3FNUZ;
    case QK_Y_E5M2: return QK_FP_E5M2;
    case QK_Y_E5M2FNUZ: return QK_FP_E5M2FNUZ;
    case QK_Y_E2M3: case QK_Y_PE2M3: return QK_FP_E2M3;
    case QK_Y_E3M2: case QK_Y_PE3M2: return QK_FP_E3M2;
    default: return QK_FP_E2M1;
    }
}

/* float8 / float4 / float6 / float16 / bfloat16 outputs: the quotient is not rounded to an
 * integer. float4 and float6 add the zero point in float as the reference does (in double for a double
 * quotient); f16/bf16 add it in float32 (AMD Quark's kernel); every result reaches its
 * type through float32, as ml_dtypes converts a double. */
QK_ALWAYS_INLINE void quant_float(int xk, int qk, int yk, const void *x, void *y, size_t n,
                        const qk_qparams *p)
{
    int fmt = fp_format(yk);
    int f4 = yk == QK_Y_E2M1 || yk == QK_Y_PE2M1 || yk >= QK_Y_E2M3;   /* float4 and float6 */
    for (size_t start = 0, len; start < n; start += len) {
        size_t e = QK_QENTRY(p, start, &len), end = n - start < len ? n : start + len;
        /* f16/bf16 add the zero point even when absent (+0): x/scale + 0 turns -0 into
         * +0 as an explicit zero point does; float4 adds it only when given (ONNX) */
        int add = (p->zpf != NULL && f4) || yk == QK_Y_F16 || yk == QK_Y_BF16;
        float zf = add && p->zpf != NULL ? p->zpf[e] : 0.0f;
        for (size_t i = start; i < end; i++) {
            float q;
            if (qk == QK_Q_F64) {
                double d = load_xd(xk, x, i) / p->scale64[e];
                if (add && f4) d += (double)zf;
                q = (float)d;
                if (add && !f4) q += zf;
            } else {
                q = quot_f(xk, qk, x, i, p->scale[e]);
                if (add) q += zf;
            }
            switch (yk) {
            case QK_Y_F16: ((uint16_t *)y)[i] = qk_f32_to_f16(q); break;
            case QK_Y_BF16: ((uint16_t *)y)[i] = qk_f32_to_bf16(q); break;
            case QK_Y_PE2M1: store_q(QK_Y_P4, y, i, qk_f32_to_fp(q, fmt, 1), p); break;
            case QK_Y_PE2M3: case QK_Y_PE3M2: {
                size_t slot = p->phase + i;
                qk_put6((uint8_t *)y + slot / 4 * 3, (unsigned)(slot % 4),
                        qk_f32_to_fp(q, fmt, 1));
                break;
            }
            default: ((uint8_t *)y)[i] = qk_f32_to_fp(q, fmt, p->saturate); break;
            }
        }
    }
}

/* Inlined with constant kinds into the table entries of float32 x and quotients (the
 * per-element switches fold away); qk_quant_scalar is the same code for run-time kinds, which
 * the other entries call: kinds that the SIMD tables take, or that real models seldom have
 * (as the entries dequantizing to float16 / bfloat16 below): 32 KB less of .text. */
QK_ALWAYS_INLINE void quant_any(int xk, int qk, int yk, const void *x, void *y, size_t n,
                                const qk_qparams *p)
{
    if (yk <= QK_Y_P2) quant_int(xk, qk, yk, x, y, n, p);
    else if (yk == QK_Y_B32) quant_b32(xk, qk, x, y, n, p);
    else quant_float(xk, qk, yk, x, y, n, p);
}

void qk_quant_scalar(int xk, int qk, int yk, const void *x, void *y, size_t n,
                     const qk_qparams *p)
{
    quant_any(xk, qk, yk, x, y, n, p);
}

QK_ALWAYS_INLINE int64_t load_code(int dk, const void *x, size_t i, const qk_dparams *p)
{
    switch (dk) {
    case QK_D_B8: {
        uint8_t b = ((const uint8_t *)x)[i];
        if (p->bits >= 8) return p->is_signed ? (int64_t)(int8_t)b : (int64_t)b;
        uint32_t m = (1u << p->bits) - 1u, c = b & m;   /* high bits are ignored, as ml_dtypes */
        return p->is_signed ? (int64_t)c - (int64_t)((c << 1) & (m + 1u)) : (int64_t)c;
    }
    case QK_D_B16:
        return p->is_signed ? (int64_t)((const int16_t *)x)[i] : (int64_t)((const uint16_t *)x)[i];
    case QK_D_B32:
        return p->is_signed ? (int64_t)((const int32_t *)x)[i] : (int64_t)((const uint32_t *)x)[i];
    default: {
        unsigned bits = dk == QK_D_P2 ? 2u : 4u, per = 8u / bits;   /* P4, P2, PE2M1 */
        size_t slot = p->phase + i;
        uint32_t m = (1u << bits) - 1u;
        uint32_t c = (((const uint8_t *)x)[slot / per] >> ((slot % per) * bits)) & m;
        if (dk == QK_D_PE2M1) return (int64_t)c;   /* the raw code */
        return p->is_signed ? (int64_t)c - (int64_t)((c << 1) & (m + 1u)) : (int64_t)c;
    }
    }
}

/* x[i] as float32 for the float input kinds (exact for float8/float4). */
QK_ALWAYS_INLINE float load_float_in(int dk, const void *x, size_t i, const qk_dparams *p)
{
    switch (dk) {
    case QK_D_E4M3FN: return qk_fp_to_f32(((const uint8_t *)x)[i], QK_FP_E4M3FN);
    case QK_D_E4M3FNUZ: return qk_fp_to_f32(((const uint8_t *)x)[i], QK_FP_E4M3FNUZ);
    case QK_D_E5M2: return qk_fp_to_f32(((const uint8_t *)x)[i], QK_FP_E5M2);
    case QK_D_E5M2FNUZ: return qk_fp_to_f32(((const uint8_t *)x)[i], QK_FP_E5M2FNUZ);
    case QK_D_E2M1: return qk_fp_to_f32(((const uint8_t *)x)[i], QK_FP_E2M1);
    case QK_D_PE2M1: return qk_fp_to_f32((uint8_t)load_code(dk, x, i, p), QK_FP_E2M1);
    case QK_D_E2M3: return qk_fp_to_f32(((const uint8_t *)x)[i], QK_FP_E2M3);
    case QK_D_E3M2: return qk_fp_to_f32(((const uint8_t *)x)[i], QK_FP_E3M2);
    case QK_D_PE2M3: case QK_D_PE3M2: {
        size_t slot = p->phase + i;
        uint8_t c = (uint8_t)qk_get6((const uint8_t *)x + slot / 4 * 3, (unsigned)(slot % 4));
        return qk_fp_to_f32(c, dk == QK_D_PE2M3 ? QK_FP_E2M3 : QK_FP_E3M2);
    }
    case QK_D_F16: return qk_f16_to_f32(((const uint16_t *)x)[i]);
    default: return qk_bf16_to_f32(((const uint16_t *)x)[i]);
    }
}

QK_ALWAYS_INLINE void dequant_any(int dk, int ok, const void *x, void *y, size_t n,
                               const qk_dparams *p)
{
    int is_float = dk >= QK_D_E4M3FN;
    for (size_t start = 0, len; start < n; start += len) {
        size_t e = QK_QENTRY(p, start, &len), end = n - start < len ? n : start + len;
        int64_t zp = dk == QK_D_B32 ? (p->zp64 ? p->zp64[e] : 0) : (p->zp ? p->zp[e] : 0);
        int fzp = (dk == QK_D_F16 || dk == QK_D_BF16 || dk >= QK_D_E2M3) && p->zpf != NULL;
        float zf = fzp ? p->zpf[e] : 0.0f;
        float s = p->scale[e];
        for (size_t i = start; i < end; i++) {
            float v;
            if (is_float) {
                v = load_float_in(dk, x, i, p);
                if (fzp) v -= zf;   /* Quark f16/bf16, float6: the difference in float32 */
                /* a NaN x gives its own (quiet) NaN whatever the scale: a fixed rule, as
                 * a compiler may swap a product's operands (and numpy's choice between two
                 * NaNs depends on its loop) */
                v = v != v ? qk_bits_f32(qk_f32_bits(v) | 0x00400000u) : v * s;
            } else {
                /* exact integer difference, one rounding to float32, one product */
                v = (float)(load_code(dk, x, i, p) - zp) * s;
            }
            switch (ok) {
            case QK_O_F32: ((float *)y)[i] = v; break;
            case QK_O_F16: ((uint16_t *)y)[i] = qk_f32_to_f16(v); break;
            case QK_O_BF16: ((uint16_t *)y)[i] = qk_f32_to_bf16(v); break;
            default: ((uint8_t *)y)[i] = qk_f32_to_e8m0(v); break;
            }
        }
    }
}

void qk_dequant_scalar(int dk, int ok, const void *x, void *y, size_t n, const qk_dparams *p)
{
    dequant_any(dk, ok, x, y, n, p);
}

static void minmax_f32_scalar(const float *x, size_t n, float *mn, float *mx)
{
    float lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        if (v < lo) lo = v;   /* comparisons with NaN are false: NaN is skipped */
        if (v > hi) hi = v;
    }
    *mn = lo;
    *mx = hi;
}

static void minmax_cols_scalar(const float *x, size_t rows, size_t stride, size_t m, float *lo,
                               float *hi)
{
    for (size_t i = 0; i < m; i++) {
        float a = INFINITY, b = -INFINITY;
        for (size_t r = 0; r < rows; r++) {
            float v = x[r * stride + i];
            if (v < a) a = v;   /* NaN is skipped */
            if (v > b) b = v;
        }
        lo[i] = a;
        hi[i] = b;
    }
}

static void minmax_groups_scalar(const float *x, size_t g, size_t b, float *lo, float *hi)
{
    for (size_t k = 0; k < g; k++) minmax_f32_scalar(x + k * b, b, lo + k, hi + k);
}

/* One named function per table entry, generated from the generic loops above. */
#define QK_QFN(xk, qk, yk) \
    static void quant_##xk##_##qk##_##yk(const void *x, void *y, size_t n, const qk_qparams *p) \
    { \
        if (xk == QK_X_F32 && qk == QK_Q_F32) quant_any(xk, qk, yk, x, y, n, p); \
        else qk_quant_scalar(xk, qk, yk, x, y, n, p); \
    }
#define QK_QFN_Y(xk, qk) QK_QFN(xk, qk, QK_Y_B8) QK_QFN(xk, qk, QK_Y_B16) \
    QK_QFN(xk, qk, QK_Y_P4) QK_QFN(xk, qk, QK_Y_P2) QK_QFN(xk, qk, QK_Y_E4M3FN) \
    QK_QFN(xk, qk, QK_Y_E4M3FNUZ) QK_QFN(xk, qk, QK_Y_E5M2) QK_QFN(xk, qk, QK_Y_E5M2FNUZ) \
    QK_QFN(xk, qk, QK_Y_E2M1) QK_QFN(xk, qk, QK_Y_PE2M1) QK_QFN(xk, qk, QK_Y_B32) \
    QK_QFN(xk, qk, QK_Y_F16) QK_QFN(xk, qk, QK_Y_BF16) QK_QFN(xk, qk, QK_Y_E2M3) \
    QK_QFN(xk, qk, QK_Y_PE2M3) QK_QFN(xk, qk, QK_Y_E3M2) QK_QFN(xk, qk, QK_Y_PE3M2)
#define QK_QFN_Q(xk) QK_QFN_Y(xk, QK_Q_F32) QK_QFN_Y(xk, QK_Q_F16) QK_QFN_Y(xk, QK_Q_BF16) \
    QK_QFN_Y(xk, QK_Q_F64)
QK_QFN_Q(QK_X_F32)
QK_QFN_Q(QK_X_F16)
QK_QFN_Q(QK_X_BF16)
QK_QFN_Q(QK_X_I32)

#define QK_DFN(dk, ok) \
    static void dequant_##dk##_##ok(const void *x, void *y, size_t n, const qk_dparams *p) \
    { \
        if (ok == QK_O_F32) dequant_any(dk, ok, x, y, n, p); \
        else qk_dequant_scalar(dk, ok, x, y, n, p); \
    }
#define QK_DFN_O(dk) QK_DFN(dk, QK_O_F32) QK_DFN(dk, QK_O_F16) QK_DFN(dk, QK_O_BF16) \
    QK_DFN(dk, QK_O_E8M0)
QK_DFN_O(QK_D_B8)
QK_DFN_O(QK_D_B16)
QK_DFN_O(QK_D_P4)
QK_DFN_O(QK_D_P2)
QK_DFN_O(QK_D_B32)
QK_DFN_O(QK_D_E4M3FN)
QK_DFN_O(QK_D_E4M3FNUZ)
QK_DFN_O(QK_D_E5M2)
QK_DFN_O(QK_D_E5M2FNUZ)
QK_DFN_O(QK_D_E2M1)
QK_DFN_O(QK_D_PE2M1)
QK_DFN_O(QK_D_F16)
QK_DFN_O(QK_D_BF16)
QK_DFN_O(QK_D_E2M3)
QK_DFN_O(QK_D_PE2M3)
QK_DFN_O(QK_D_E3M2)
QK_DFN_O(QK_D_PE3M2)

/* The table's recip_f32 (kernels.h) where no vector table serves: 8 entries a step in GCC /
 * clang vector extensions (with -O2's own vectorising the lanes' flags went through memory:
 * 28,672 entries with their zero points 14.1 -> 9.6 us in x86-64's baseline SSE2), else a
 * plain loop. |s|'s bits as int32 (below 2^31: no difference overflows) are out of range when
 * one of v - lo, hi - v is negative; NaN and inf lie above QK_RECIP_MAX, 0 and subnormals
 * below. */
static unsigned recip_f32_scalar(const float *s, float *r, size_t n)
{
    int32_t lo = (int32_t)qk_f32_bits(QK_RECIP_MIN), hi = (int32_t)qk_f32_bits(QK_RECIP_MAX);
    int32_t bad = 0, sg = 0;
    size_t i = 0;
#if defined(__GNUC__) || defined(__clang__)
    typedef int32_t v4i __attribute__((vector_size(16)));
    typedef float v4f __attribute__((vector_size(16)));
    v4i b0 = {0, 0, 0, 0}, b1 = b0, g0 = b0, g1 = b0;
    const v4f one = {1.0f, 1.0f, 1.0f, 1.0f};
    for (; i + 8 <= n; i += 8) {
        v4f s0, s1;
        v4i u0, u1;
        memcpy(&s0, s + i, 16); memcpy(&s1, s + i + 4, 16);
        memcpy(&u0, s + i, 16); memcpy(&u1, s + i + 4, 16);
        v4i v0 = u0 & 0x7fffffff, v1 = u1 & 0x7fffffff;
        b0 |= (v0 - lo) | (hi - v0);
        b1 |= (v1 - lo) | (hi - v1);
        g0 |= u0;
        g1 |= u1;
        if (r) {
            v4f r0 = one / s0, r1 = one / s1;
            memcpy(r + i, &r0, 16); memcpy(r + i + 4, &r1, 16);
        }
    }
    b0 |= b1;
    g0 |= g1;
    bad = b0[0] | b0[1] | b0[2] | b0[3];
    sg = g0[0] | g0[1] | g0[2] | g0[3];
#endif
    for (; i < n; i++) {
        int32_t u = (int32_t)qk_f32_bits(s[i]), v = u & 0x7fffffff;
        bad |= (v - lo) | (hi - v);
        sg |= u;
        if (r) r[i] = 1.0f / s[i];
    }
    return (bad < 0 ? (unsigned)QK_RECIP_OUT : 0u) | (sg < 0 ? (unsigned)QK_RECIP_NEG : 0u);
}

/* The table's widen_zp (kernels.h): steps of 8 from a local copy of the source, which -O2
 * widens in vector registers and stores straight to z (z may alias bytes read through src,
 * not the copy). */
#define QK_WIDEN(T) do { \
        const T *s_ = (const T *)src; \
        for (i = 0; i + 8 <= n; i += 8) { \
            T v_[8]; \
            memcpy(v_, s_ + i, sizeof v_); \
            for (int k = 0; k < 8; k++) z[i + k] = v_[k]; \
        } \
        for (; i < n; i++) z[i] = s_[i]; \
    } while (0)
static void widen_zp_scalar(const void *src, int32_t *z, size_t n, int dk, int sgn,
                            unsigned bits)
{
    size_t i;
    if (dk == QK_D_B8 && bits < 8) {   /* the low bits, sign-extended */
        const unsigned char *b = (const unsigned char *)src;
        int32_t m = (1 << bits) - 1, sx = sgn ? 1 << (bits - 1) : 0;
        for (i = 0; i < n; i++) z[i] = (b[i] & m) - 2 * (b[i] & sx);
    } else if (dk == QK_D_B16) {
        if (sgn) QK_WIDEN(int16_t);
        else QK_WIDEN(uint16_t);
    } else {
        if (sgn) QK_WIDEN(int8_t);
        else QK_WIDEN(uint8_t);
    }
}
#undef QK_WIDEN

#define QK_QROW(xk, qk) { quant_##xk##_##qk##_QK_Y_B8, quant_##xk##_##qk##_QK_Y_B16, \
    quant_##xk##_##qk##_QK_Y_P4, quant_##xk##_##qk##_QK_Y_P2, \
    quant_##xk##_##qk##_QK_Y_E4M3FN, quant_##xk##_##qk##_QK_Y_E4M3FNUZ, \
    quant_##xk##_##qk##_QK_Y_E5M2, quant_##xk##_##qk##_QK_Y_E5M2FNUZ, \
    quant_##xk##_##qk##_QK_Y_E2M1, quant_##xk##_##qk##_QK_Y_PE2M1, \
    quant_##xk##_##qk##_QK_Y_B32, quant_##xk##_##qk##_QK_Y_F16, quant_##xk##_##qk##_QK_Y_BF16, \
    quant_##xk##_##qk##_QK_Y_E2M3, quant_##xk##_##qk##_QK_Y_PE2M3, \
    quant_##xk##_##qk##_QK_Y_E3M2, quant_##xk##_##qk##_QK_Y_PE3M2 }
#define QK_QX(xk) { QK_QROW(xk, QK_Q_F32), QK_QROW(xk, QK_Q_F16), QK_QROW(xk, QK_Q_BF16), \
                    QK_QROW(xk, QK_Q_F64) }
#define QK_DROW(dk) { dequant_##dk##_QK_O_F32, dequant_##dk##_QK_O_F16, dequant_##dk##_QK_O_BF16, \
                      dequant_##dk##_QK_O_E8M0 }

const qk_table qk_scalar_table = {
    "scalar",
    NULL,
    { QK_QX(QK_X_F32), QK_QX(QK_X_F16), QK_QX(QK_X_BF16), QK_QX(QK_X_I32) },
    { QK_DROW(QK_D_B8), QK_DROW(QK_D_B16), QK_DROW(QK_D_P4), QK_DROW(QK_D_P2),
      QK_DROW(QK_D_B32), QK_DROW(QK_D_E4M3FN), QK_DROW(QK_D_E4M3FNUZ), QK_DROW(QK_D_E5M2),
      QK_DROW(QK_D_E5M2FNUZ), QK_DROW(QK_D_E2M1), QK_DROW(QK_D_PE2M1), QK_DROW(QK_D_F16),
      QK_DROW(QK_D_BF16), QK_DROW(QK_D_E2M3), QK_DROW(QK_D_PE2M3), QK_DROW(QK_D_E3M2),
      QK_DROW(QK_D_PE3M2) },
    minmax_f32_scalar,
    recip_f32_scalar,
    widen_zp_scalar,
    minmax_cols_scalar,
    minmax_groups_scalar,
};
