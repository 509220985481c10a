/* AArch64 Advanced SIMD (NEON) kernels. Baseline ARMv8-A only: half-precision values are
 * converted with FCVTL/FCVTN (vcvt_f32_f16 / vcvt_f16_f32), never computed in, so the file runs
 * on cores without FP16 arithmetic (Cortex-A72).
 *
 * Every kernel is bit-identical to the scalar table (scalar.c): the same float32 (float64 for
 * QK_Q_F64) operations in the same order (true division, separate multiply), the same
 * rounding (FCVTNS and FCVTN round to nearest even under the default FPCR), the same
 * clamping; or, for integer outputs of float32/float16/bfloat16 quotients, the exact
 * reciprocal form of docs/EXACT-DIVISION.md (two fused multiply-adds that round to the same
 * integer as the division; runs without reciprocals go to the scalar kernel).
 * A run is split into a head (packed outputs: elements before the first whole byte), a body of
 * 16-element chunks, and a tail; head and tail go to the scalar kernel.
 */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "convert.h"

#if defined(_MSC_VER) && !defined(__clang__)
#define QN_INLINE static __forceinline
#elif defined(__GNUC__) || defined(__clang__)
#define QN_INLINE static inline __attribute__((always_inline))
#else
#define QN_INLINE static inline
#endif

/* The short loops over the vectors of a chunk must be unrolled so that arrays of vectors stay
 * in registers (gcc -O2 does not do it by itself). */
#if defined(__GNUC__) || defined(__clang__)
#define QN_UNROLL _Pragma("GCC unroll 8")
#else
#define QN_UNROLL
#endif

#define QN_CHUNK 16   /* elements per loop iteration: one uint8x16_t of codes */

/* How the parameter entries map onto a chunk (resolved once per run). */
enum { QN_SINGLE, QN_EACH, QN_BLOCKS };

static size_t qn_blk(size_t blk) { return blk ? blk : 1; }   /* as the scalar kernels */

/* Packed float6: 4 codes in a 3-byte group (kernels.h), phase the slot in the group. */
static int qn_p6_y(int yk) { return yk == QK_Y_PE2M3 || yk == QK_Y_PE3M2; }
static int qn_p6_d(int dk) { return dk == QK_D_PE2M3 || dk == QK_D_PE3M2; }
/* bytes from the start of packed data to the byte (group) holding slot `slot` */
static size_t qn_goff(int p6, unsigned per, size_t slot) { return p6 ? slot / 4 * 3 : slot / per; }

static unsigned qn_per_byte(int kind_is_p4, int kind_is_p2)
{
    return kind_is_p4 ? 2u : kind_is_p2 ? 4u : 1u;
}

/* ------------------------------------------------------------------ float16 / bfloat16 */

QN_INLINE float32x4_t qn_round_f16(float32x4_t v)
{
    return vcvt_f32_f16(vcvt_f16_f32(v));   /* FCVTN rounds to nearest even, overflow -> inf */
}

/* Round to nearest even to bfloat16 with integer arithmetic (result in the high half).
 * Callers treat NaN lanes apart: the carry can turn a NaN into an infinity. */
QN_INLINE uint32x4_t qn_bf16_bits_rounded(uint32x4_t u)
{
    uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
    return vaddq_u32(u, vaddq_u32(vdupq_n_u32(0x7fffu), lsb));
}

QN_INLINE float32x4_t qn_round_bf16(float32x4_t v)
{
    uint32x4_t u = vreinterpretq_u32_f32(v);
    uint32x4_t r = vandq_u32(qn_bf16_bits_rounded(u), vdupq_n_u32(0xffff0000u));
    return vreinterpretq_f32_u32(vbslq_u32(vceqq_f32(v, v), r, u));
}

/* float32 -> bfloat16 bits as convert.h: nearest even, NaN -> sign | 0x7fc0. */
QN_INLINE uint16x4_t qn_to_bf16(float32x4_t v)
{
    uint32x4_t u = vreinterpretq_u32_f32(v);
    uint16x4_t r = vshrn_n_u32(qn_bf16_bits_rounded(u), 16);
    uint16x4_t nan = vorr_u16(vand_u16(vshrn_n_u32(u, 16), vdup_n_u16(0x8000u)),
                              vdup_n_u16(0x7fc0u));
    return vbsl_u16(vmovn_u32(vceqq_f32(v, v)), r, nan);
}

QN_INLINE uint16x4_t qn_to_f16(float32x4_t v)
{
    /* FCVTN keeps a NaN's sign and top payload bits and sets the quiet bit: convert.h's rule */
    return vreinterpret_u16_f16(vcvt_f16_f32(v));
}

QN_INLINE float32x4_t qn_bf16_to_f32(uint16x4_t h)
{
    return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
}

/* ------------------------------------------------------------------ quantize */

/* Parameters of one chunk: a float32 vector per 4 elements, or (QK_Q_F64) a float64 vector
 * per 2; only the fields of the run's quotient precision are set. */
typedef struct qn_qpar {
    float32x4_t s[4], lo[4], hi[4];
    float64x2_t s64[8], lo64[8], hi64[8];
    int32x4_t zp[4];
    float32x4_t zf[4];   /* float zero points (p->zpf: float4 outputs), else unused */
} qn_qpar;

QN_INLINE float64x2_t qn_s32_to_f64_lo(int32x4_t a) { return vcvtq_f64_s64(vmovl_s32(vget_low_s32(a))); }
QN_INLINE float64x2_t qn_s32_to_f64_hi(int32x4_t a) { return vcvtq_f64_s64(vmovl_s32(vget_high_s32(a))); }

/* lo = qmin - zp and hi = qmax - zp: exact in int32, float32 and float64 (<= 16-bit ranges). */
QN_INLINE void qn_qpar_bounds(int qk, qn_qpar *v, const qk_qparams *p)
{
    int32x4_t qmin = vdupq_n_s32(p->qmin), qmax = vdupq_n_s32(p->qmax);
    QN_UNROLL
    for (int k = 0; k < 4; k++) {
        int32x4_t lo = vsubq_s32(qmin, v->zp[k]), hi = vsubq_s32(qmax, v->zp[k]);
        if (qk == QK_Q_F64) {
            v->lo64[2 * k] = qn_s32_to_f64_lo(lo);
            v->lo64[2 * k + 1] = qn_s32_to_f64_hi(lo);
            v->hi64[2 * k] = qn_s32_to_f64_lo(hi);
            v->hi64[2 * k + 1] = qn_s32_to_f64_hi(hi);
        } else {
            v->lo[k] = vcvtq_f32_s32(lo);
            v->hi[k] = vcvtq_f32_s32(hi);
        }
    }
}

QN_INLINE void qn_qpar_entry(int qk, qn_qpar *v, const qk_qparams *p, size_t e)
{
    int32x4_t zp = vdupq_n_s32(p->zp ? p->zp[e] : 0);
    float32x4_t zf = vdupq_n_f32(p->zpf ? p->zpf[e] : 0.0f);
    QN_UNROLL
    for (int k = 0; k < 4; k++) { v->zp[k] = zp; v->zf[k] = zf; }
    if (qk == QK_Q_F64) {
        float64x2_t s = vdupq_n_f64(p->scale64[e]);
        QN_UNROLL
        for (int j = 0; j < 8; j++) v->s64[j] = s;
    } else {
        float32x4_t s = vdupq_n_f32(p->scale[e]);
        QN_UNROLL
        for (int k = 0; k < 4; k++) v->s[k] = s;
    }
    qn_qpar_bounds(qk, v, p);
}

QN_INLINE void qn_qpar_each(int qk, qn_qpar *v, const qk_qparams *p, size_t i)
{
    QN_UNROLL
    for (int k = 0; k < 4; k++) {
        v->zp[k] = p->zp ? vld1q_s32(p->zp + i + 4 * k) : vdupq_n_s32(0);
        v->zf[k] = p->zpf ? vld1q_f32(p->zpf + i + 4 * k) : vdupq_n_f32(0.0f);
        if (qk == QK_Q_F64) {
            v->s64[2 * k] = vld1q_f64(p->scale64 + i + 4 * k);
            v->s64[2 * k + 1] = vld1q_f64(p->scale64 + i + 4 * k + 2);
        } else {
            v->s[k] = vld1q_f32(p->scale + i + 4 * k);
        }
    }
    qn_qpar_bounds(qk, v, p);
}

/* A chunk that crosses entry boundaries: collect its entries lane by lane. *e and *off
 * (entry, position inside it) advance past the chunk. */
static void qn_qpar_gather(int qk, qn_qpar *v, const qk_qparams *p, size_t blk, size_t *e,
                           size_t *off)
{
    float s[QN_CHUNK], zf[QN_CHUNK];
    double d[QN_CHUNK];
    int32_t z[QN_CHUNK];
    for (int j = 0; j < QN_CHUNK; j++) {
        if (qk == QK_Q_F64) d[j] = p->scale64[*e];
        else s[j] = p->scale[*e];
        z[j] = p->zp ? p->zp[*e] : 0;
        zf[j] = p->zpf ? p->zpf[*e] : 0.0f;
        if (++*off == blk) { *off = 0; ++*e; }
    }
    QN_UNROLL
    for (int k = 0; k < 4; k++) {
        v->zp[k] = vld1q_s32(z + 4 * k);
        v->zf[k] = vld1q_f32(zf + 4 * k);
        if (qk == QK_Q_F64) {
            v->s64[2 * k] = vld1q_f64(d + 4 * k);
            v->s64[2 * k + 1] = vld1q_f64(d + 4 * k + 2);
        } else {
            v->s[k] = vld1q_f32(s + 4 * k);
        }
    }
    qn_qpar_bounds(qk, v, p);
}

/* 16 inputs as float32 (exact widening; int32 rounds to nearest even as the C cast does). */
QN_INLINE void qn_load_x(int xk, const void *x, size_t i, float32x4_t v[4])
{
    if (xk == QK_X_F32) {
        const float *f = (const float *)x + i;
        QN_UNROLL
        for (int k = 0; k < 4; k++) v[k] = vld1q_f32(f + 4 * k);
    } else if (xk == QK_X_I32) {
        const int32_t *d = (const int32_t *)x + i;
        QN_UNROLL
        for (int k = 0; k < 4; k++) v[k] = vcvtq_f32_s32(vld1q_s32(d + 4 * k));
    } else {
        const uint16_t *h = (const uint16_t *)x + i;
        QN_UNROLL
        for (int k = 0; k < 2; k++) {
            uint16x8_t a = vld1q_u16(h + 8 * k);
            if (xk == QK_X_F16) {
                v[2 * k] = vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(a)));
                v[2 * k + 1] = vcvt_f32_f16(vreinterpret_f16_u16(vget_high_u16(a)));
            } else {
                v[2 * k] = qn_bf16_to_f32(vget_low_u16(a));
                v[2 * k + 1] = qn_bf16_to_f32(vget_high_u16(a));
            }
        }
    }
}

/* QK_Q_F64: x and the scale widened to double (exactly), divided there. */
QN_INLINE void qn_quant_chunk64(int xk, const void *x, size_t i, const qn_qpar *pv,
                                int32x4_t r[4])
{
    float64x2_t d[8];
    if (xk == QK_X_I32) {
        const int32_t *s = (const int32_t *)x + i;
        QN_UNROLL
        for (int k = 0; k < 4; k++) {
            int32x4_t a = vld1q_s32(s + 4 * k);
            d[2 * k] = qn_s32_to_f64_lo(a);
            d[2 * k + 1] = qn_s32_to_f64_hi(a);
        }
    } else {
        float32x4_t v[4];
        qn_load_x(xk, x, i, v);
        QN_UNROLL
        for (int k = 0; k < 4; k++) {
            d[2 * k] = vcvt_f64_f32(vget_low_f32(v[k]));
            d[2 * k + 1] = vcvt_f64_f32(vget_high_f32(v[k]));
        }
    }
    int64x2_t q64[8];
    QN_UNROLL
    for (int j = 0; j < 8; j++) {
        float64x2_t q = vdivq_f64(d[j], pv->s64[j]);
        q = vmaxnmq_f64(q, pv->lo64[j]);   /* as below: NaN -> lo */
        q = vminnmq_f64(q, pv->hi64[j]);
        q64[j] = vcvtnq_s64_f64(q);
    }
    QN_UNROLL
    for (int k = 0; k < 4; k++)
        r[k] = vaddq_s32(vcombine_s32(vmovn_s64(q64[2 * k]), vmovn_s64(q64[2 * k + 1])),
                         pv->zp[k]);
}

/* rint(x / s) + zp, saturated; NaN -> qmin. */
QN_INLINE void qn_quant_chunk(int xk, int qk, const void *x, size_t i, const qn_qpar *pv,
                              int32x4_t r[4])
{
    if (qk == QK_Q_F64) {
        qn_quant_chunk64(xk, x, i, pv, r);
        return;
    }
    float32x4_t v[4];
    qn_load_x(xk, x, i, v);
    QN_UNROLL
    for (int k = 0; k < 4; k++) {
        float32x4_t q;
        if (qk == QK_Q_F16) {
            /* an f16 input is already exact in f16: its rounding is the identity */
            float32x4_t a = xk == QK_X_F16 ? v[k] : qn_round_f16(v[k]);
            q = qn_round_f16(vdivq_f32(a, pv->s[k]));
        } else if (qk == QK_Q_BF16) {
            float32x4_t a = xk == QK_X_BF16 ? v[k] : qn_round_bf16(v[k]);
            q = qn_round_bf16(vdivq_f32(a, pv->s[k]));
        } else {
            q = vdivq_f32(v[k], pv->s[k]);
        }
        /* FMAXNM returns the number when the other operand is a quiet NaN (a quotient is
         * never signalling), so NaN lands on lo; then the value is finite and in range. */
        q = vmaxnmq_f32(q, pv->lo[k]);
        q = vminnmq_f32(q, pv->hi[k]);
        r[k] = vaddq_s32(vcvtnq_s32_f32(q), pv->zp[k]);
    }
}

/* Codes as bytes: the low 8 bits of each int32 (two's complement), as the scalar store. */
QN_INLINE uint8x16_t qn_narrow_u8(const int32x4_t r[4])
{
    uint16x8_t a = vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(r[0])),
                                vmovn_u32(vreinterpretq_u32_s32(r[1])));
    uint16x8_t b = vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(r[2])),
                                vmovn_u32(vreinterpretq_u32_s32(r[3])));
    return vcombine_u8(vmovn_u16(a), vmovn_u16(b));
}

/* 16 byte codes of chunk c to the body (y: its first element, a whole byte if packed). */
QN_INLINE void qn_store_bytes(int yk, void *y, size_t c, uint8x16_t b)
{
    if (yk == QK_Y_B8) {
        vst1q_u8((uint8_t *)y + c, b);
    } else if (yk == QK_Y_P4) {
        /* per 16-bit lane: low byte = e0 | e1 << 4 */
        uint16x8_t w = vreinterpretq_u16_u8(vandq_u8(b, vdupq_n_u8(0x0f)));
        w = vorrq_u16(w, vshrq_n_u16(w, 4));
        vst1_u8((uint8_t *)y + c / 2, vmovn_u16(w));
    } else {
        /* two merges: pairs of 2-bit codes into nibbles, pairs of nibbles into bytes */
        uint16x8_t w = vreinterpretq_u16_u8(vandq_u8(b, vdupq_n_u8(0x03)));
        w = vorrq_u16(w, vshrq_n_u16(w, 6));
        uint8x8_t d = vmovn_u16(w);
        uint16x4_t w2 = vreinterpret_u16_u8(d);
        w2 = vorr_u16(w2, vshr_n_u16(w2, 4));
        uint8x8_t out = vmovn_u16(vcombine_u16(w2, w2));
        uint32_t word = vget_lane_u32(vreinterpret_u32_u8(out), 0);
        memcpy((uint8_t *)y + c / 4, &word, 4);
    }
}

/* Store chunk c of the body; y points at the body's first element (a whole byte if packed). */
QN_INLINE void qn_store_q(int yk, void *y, size_t c, const int32x4_t r[4], uint8x16_t mask)
{
    if (yk == QK_Y_B16) {
        uint16_t *d = (uint16_t *)y + c;
        vst1q_u16(d, vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(r[0])),
                                  vmovn_u32(vreinterpretq_u32_s32(r[1]))));
        vst1q_u16(d + 8, vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(r[2])),
                                      vmovn_u32(vreinterpretq_u32_s32(r[3]))));
        return;
    }
    uint8x16_t b = qn_narrow_u8(r);
    qn_store_bytes(yk, y, c, yk == QK_Y_B8 ? vandq_u8(b, mask) : b);
}

/* ------------------------------------------------------------------ float8 / float4 */

static int qn_is_fp(int yk)   /* the float8 / float4 / float6 outputs this file vectorises */
{
    return yk == QK_Y_E4M3FN || yk == QK_Y_E5M2 || yk == QK_Y_E2M1 || yk == QK_Y_PE2M1 ||
           yk >= QK_Y_E2M3;
}

static int qn_fp_format(int yk)
{
    return yk == QK_Y_E4M3FN ? QK_FP_E4M3FN : yk == QK_Y_E5M2 ? QK_FP_E5M2
           : yk == QK_Y_E2M3 || yk == QK_Y_PE2M3 ? QK_FP_E2M3
           : yk == QK_Y_E3M2 || yk == QK_Y_PE3M2 ? QK_FP_E3M2 : QK_FP_E2M1;
}

/* float32 -> float8 / float4 codes (one per lane), qk_f32_to_fp's rule. Normal results:
 * rebias and round the dropped bits to nearest even in integers. Subnormal results: adding
 * 2^(24 - bias - m), whose last place is the smallest subnormal, makes the FPU round |q| to
 * that unit (nearest even); the sum's low bits are the code. */
QN_INLINE uint32x4_t qn_to_fp(float32x4_t q, int fmt, int sat)
{
    const int m = (int)qk_fp_man(fmt), bias = qk_fp_bias(fmt);
    const uint32_t maxc = qk_fp_maxcode(fmt);
    uint32x4_t u = vreinterpretq_u32_f32(q);
    uint32x4_t a = vandq_u32(u, vdupq_n_u32(0x7fffffffu));
    uint32x4_t sign = vandq_u32(u, vdupq_n_u32(0x80000000u));
    int32x4_t down = vdupq_n_s32(-(23 - m));
    uint32x4_t r = vsubq_u32(a, vdupq_n_u32((uint32_t)(127 - bias) << 23));
    uint32x4_t odd = vandq_u32(vshlq_u32(r, down), vdupq_n_u32(1));
    r = vaddq_u32(r, vaddq_u32(vdupq_n_u32((1u << (22 - m)) - 1u), odd));
    uint32x4_t cn = vshlq_u32(r, down);
    float32x4_t magic = vreinterpretq_f32_u32(vdupq_n_u32((uint32_t)(127 + 24 - bias - m) << 23));
    uint32x4_t cs = vsubq_u32(vreinterpretq_u32_f32(vaddq_f32(vreinterpretq_f32_u32(a), magic)),
                              vreinterpretq_u32_f32(magic));
    uint32x4_t c = vbslq_u32(vcltq_u32(a, vdupq_n_u32((uint32_t)(128 - bias) << 23)), cs, cn);
    uint32x4_t nan = vcgtq_u32(a, vdupq_n_u32(0x7f800000u));   /* inf overflows via cn */
    if (sat || qk_fp_finite(fmt))
        c = vminq_u32(c, vdupq_n_u32(maxc));
    else
        c = vbslq_u32(vcgtq_u32(c, vdupq_n_u32(maxc)),
                      vdupq_n_u32(fmt == QK_FP_E5M2 ? 0x7cu : 0x7fu), c);
    if (qk_fp_finite(fmt)) {   /* float4 / float6, no NaN: the zero of the opposite sign */
        c = vbicq_u32(c, nan);
        sign = veorq_u32(sign, vandq_u32(nan, vdupq_n_u32(0x80000000u)));
        return vorrq_u32(c, fmt == QK_FP_E2M1 ? vshrq_n_u32(sign, 28) : vshrq_n_u32(sign, 26));
    }
    c = vbslq_u32(nan, vdupq_n_u32(fmt == QK_FP_E5M2 ? 0x7eu : 0x7fu), c);
    return vorrq_u32(c, vshrq_n_u32(sign, 24));
}

/* 16 quotients x / s (+ the float4 zero point) -> 16 codes. */
QN_INLINE uint8x16_t qn_fquant_chunk(int yk, int sat, int has_zf, const void *x, size_t i,
                                     const qn_qpar *pv)
{
    float32x4_t v[4];
    int32x4_t c[4];
    qn_load_x(QK_X_F32, x, i, v);
    QN_UNROLL
    for (int k = 0; k < 4; k++) {
        float32x4_t q = vdivq_f32(v[k], pv->s[k]);
        if (has_zf) q = vaddq_f32(q, pv->zf[k]);
        c[k] = vreinterpretq_s32_u32(qn_to_fp(q, qn_fp_format(yk), sat));
    }
    return qn_narrow_u8(c);
}

QN_INLINE void qn_store_fp(int yk, void *y, size_t c, uint8x16_t b)
{
    if (qn_p6_y(yk)) {
        /* c0 | c1 << 6 per 16-bit lane, then pairs of those | << 12 per 32-bit lane: each
         * dword holds a group's 24 bits; its three low bytes are gathered into 12 */
        static const uint8_t g3[16] = {0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 16, 16, 16, 16};
        uint16x8_t h = vreinterpretq_u16_u8(b);
        h = vsliq_n_u16(h, vshrq_n_u16(h, 8), 6);
        uint32x4_t w = vreinterpretq_u32_u16(h);
        w = vsliq_n_u32(w, vshrq_n_u32(w, 16), 12);
        uint8x16_t o = vqtbl1q_u8(vreinterpretq_u8_u32(w), vld1q_u8(g3));
        uint8_t *d = (uint8_t *)y + c / 4 * 3;
        uint32_t tail = vgetq_lane_u32(vreinterpretq_u32_u8(o), 2);
        vst1_u8(d, vget_low_u8(o));
        memcpy(d + 8, &tail, 4);
    } else if (yk == QK_Y_PE2M1) {   /* as QK_Y_P4: low byte of each 16-bit lane = e0 | e1 << 4 */
        uint16x8_t w = vreinterpretq_u16_u8(b);
        w = vorrq_u16(w, vshrq_n_u16(w, 4));
        vst1_u8((uint8_t *)y + c / 2, vmovn_u16(w));
    } else {
        vst1q_u8((uint8_t *)y + c, b);
    }
}

/* Scalar kernel on elements [a, b) of the run, one call per entry touched. */
static void qn_quant_part(int xk, int qk, int yk, const void *x, void *y, size_t a, size_t b,
                          size_t n, const qk_qparams *p)
{
    static const size_t xsize[QK_NX] = {4, 2, 2, 4};
    size_t blk = qn_blk(p->blk);
    unsigned per = qn_p6_y(yk) ? 4u : qn_per_byte(yk == QK_Y_P4 || yk == QK_Y_PE2M1, yk == QK_Y_P2);
    while (a < b) {
        size_t e = blk >= n ? 0 : a / blk;
        size_t end = blk >= n ? b : ((e + 1) * blk < b ? (e + 1) * blk : b);
        qk_qparams q = qk_qparams_at(p, e);
        q.blk = end - a;
        void *yy;
        if (per > 1) {
            size_t slot = p->phase + a;
            yy = (uint8_t *)y + qn_goff(qn_p6_y(yk), per, slot);
            q.phase = (unsigned)(slot % per);
        } else {
            yy = (uint8_t *)y + a * (yk == QK_Y_B16 ? 2u : 1u);
        }
        qk_quant_scalar(xk, qk, yk, (const uint8_t *)x + a * xsize[xk], yy, end - a, &q);
        a = end;
    }
}

/* One chunk of any output kind: integer codes, or float8 / float4 (x f32, quotient f32). */
QN_INLINE void qn_any_chunk(int xk, int qk, int yk, int sat, int has_zf, const void *x,
                            void *yb, size_t i, size_t i0, const qn_qpar *pv, uint8x16_t mask)
{
    if (qn_is_fp(yk)) {
        qn_store_fp(yk, yb, i - i0, qn_fquant_chunk(yk, sat, has_zf, x, i, pv));
    } else {
        int32x4_t r[4];
        qn_quant_chunk(xk, qk, x, i, pv, r);
        qn_store_q(yk, yb, i - i0, r, mask);
    }
}

QN_INLINE void qn_quant_body_fp(int xk, int qk, int yk, int sat, int has_zf, int mode,
                                const void *x, void *yb, size_t i0, size_t i1,
                                const qk_qparams *p)
{
    uint8x16_t mask = vdupq_n_u8((uint8_t)p->mask);
    qn_qpar pv;
    if (mode == QN_SINGLE) {
        qn_qpar_entry(qk, &pv, p, 0);
        for (size_t i = i0; i < i1; i += QN_CHUNK)
            qn_any_chunk(xk, qk, yk, sat, has_zf, x, yb, i, i0, &pv, mask);
    } else if (mode == QN_EACH) {
        for (size_t i = i0; i < i1; i += QN_CHUNK) {
            qn_qpar_each(qk, &pv, p, i);
            qn_any_chunk(xk, qk, yk, sat, has_zf, x, yb, i, i0, &pv, mask);
        }
    } else {
        size_t blk = p->blk, e = i0 / blk, off = i0 % blk;
        for (size_t i = i0; i < i1; i += QN_CHUNK) {
            if (blk - off >= QN_CHUNK) {
                qn_qpar_entry(qk, &pv, p, e);
                off += QN_CHUNK;
                if (off == blk) { off = 0; e++; }
            } else {
                qn_qpar_gather(qk, &pv, p, blk, &e, &off);
            }
            qn_any_chunk(xk, qk, yk, sat, has_zf, x, yb, i, i0, &pv, mask);
        }
    }
}

/* ------------------------------------------------------------------ reciprocal form */

/* Integer outputs of float32, float16 and bfloat16 quotients when the operator layer passes
 * reciprocals (p->rscale): x / s becomes q0 = RN(x r), e = x - q0 s (FMLS, exact),
 * q1 = RN(q0 + e r) (FMLA), which FCVTNS rounds half to even to the same integer as the
 * correctly rounded quotient (docs/EXACT-DIVISION.md). FCVTNS saturates out-of-range values
 * and takes NaN to 0, so NaN is steered to a quotient of -2^17 in float first; everything
 * after the conversion is saturating integer arithmetic:
 *   c + (zp - qmin), saturated to [0, qmax - qmin] (SQXTN, SQADD, SQXTUN, UMIN; B16: SQADD,
 *   SQXTUN, UMIN), then xor (-qmin & mask) gives the two's complement code of c + zp.
 * Form A, one positive scale: x is clamped to [-2^17 s, 2^17 s] (exact: s times a power of
 * two, finite as |s| <= QK_RECIP_MAX). FMIN first quiets a signalling NaN and FMAXNM then
 * takes every NaN to -2^17 s; infinities land on the bounds. Inside them the quotient is
 * untouched, beyond them it saturates like the true one, and x r cannot overflow.
 * Form B, parameters per lane (signs may differ): q0 is clamped to [-2^17, 2^17] instead
 * (FMUL has quieted a signalling NaN), which changes nothing inside and leaves q1 beyond the
 * range (or infinite) with the sign of the true quotient outside; q1 is bounded below at
 * -2^17, which takes NaN there (NaN x: q0 = -2^17, e and q1 NaN). */
#define QN_RK 131072.0f   /* 2^17: beyond every 16-bit code range */

typedef struct qn_rpar {
    float32x4_t s[4], r[4];
    float32x4_t xl, nxl;   /* form A: 2^17 s and -2^17 s */
    int32x4_t zw[4];       /* zp - qmin per lane */
} qn_rpar;

QN_INLINE void qn_rpar_entry(qn_rpar *v, const qk_qparams *p, size_t e)
{
    float s = p->scale[e];
    float32x4_t sv = vdupq_n_f32(s), rv = vdupq_n_f32(p->rscale[e]);
    int32x4_t zw = vdupq_n_s32((p->zp ? p->zp[e] : 0) - p->qmin);
    QN_UNROLL
    for (int k = 0; k < 4; k++) { v->s[k] = sv; v->r[k] = rv; v->zw[k] = zw; }
    v->xl = vdupq_n_f32(QN_RK * s);
    v->nxl = vdupq_n_f32(-QN_RK * s);
}

QN_INLINE void qn_rpar_each(qn_rpar *v, const qk_qparams *p, size_t i)
{
    int32x4_t qmin = vdupq_n_s32(p->qmin);
    QN_UNROLL
    for (int k = 0; k < 4; k++) {
        v->s[k] = vld1q_f32(p->scale + i + 4 * k);
        v->r[k] = vld1q_f32(p->rscale + i + 4 * k);
        v->zw[k] = vsubq_s32(p->zp ? vld1q_s32(p->zp + i + 4 * k) : vdupq_n_s32(0), qmin);
    }
}

/* A chunk that crosses entry boundaries, lane by lane, as qn_qpar_gather. */
static void qn_rpar_gather(qn_rpar *v, const qk_qparams *p, size_t blk, size_t *e, size_t *off)
{
    float s[QN_CHUNK], r[QN_CHUNK];
    int32_t z[QN_CHUNK];
    for (int j = 0; j < QN_CHUNK; j++) {
        s[j] = p->scale[*e];
        r[j] = p->rscale[*e];
        z[j] = (p->zp ? p->zp[*e] : 0) - p->qmin;
        if (++*off == blk) { *off = 0; ++*e; }
    }
    QN_UNROLL
    for (int k = 0; k < 4; k++) {
        v->s[k] = vld1q_f32(s + 4 * k);
        v->r[k] = vld1q_f32(r + 4 * k);
        v->zw[k] = vld1q_s32(z + 4 * k);
    }
}

/* 4 nv quotients (nv = 4, or 8 for two chunks) by the reciprocal form, converted to int32
 * (form A when single); chunk j uses the parameters pv[j]. Each step is done for all vectors
 * before the next, so an in-order core always has independent work in flight. */
QN_INLINE void qn_rquant(int xk, int qk, int single, int nv, const void *x, size_t i,
                         const qn_rpar *pv, int32x4_t c[8])
{
    const float32x4_t k_hi = vdupq_n_f32(QN_RK), k_lo = vdupq_n_f32(-QN_RK);
    float32x4_t v[8], q0[8], e[8], q[8];
    qn_load_x(xk, x, i, v);
    if (nv > 4) qn_load_x(xk, x, i + QN_CHUNK, v + 4);
#define QN_P(f, k) (pv[(k) >> 2].f[(k) & 3])
    QN_UNROLL
    for (int k = 0; k < nv; k++) {   /* the numerator in the quotient precision */
        if (qk == QK_Q_F16 && xk != QK_X_F16) v[k] = qn_round_f16(v[k]);
        if (qk == QK_Q_BF16 && xk != QK_X_BF16) v[k] = qn_round_bf16(v[k]);
    }
    if (single) {
        QN_UNROLL
        for (int k = 0; k < nv; k++) v[k] = vminq_f32(v[k], pv->xl);
        QN_UNROLL
        for (int k = 0; k < nv; k++) v[k] = vmaxnmq_f32(v[k], pv->nxl);
        QN_UNROLL
        for (int k = 0; k < nv; k++) q0[k] = vmulq_f32(v[k], QN_P(r, k));
    } else {
        QN_UNROLL
        for (int k = 0; k < nv; k++) q0[k] = vmulq_f32(v[k], QN_P(r, k));
        QN_UNROLL
        for (int k = 0; k < nv; k++) q0[k] = vmaxnmq_f32(q0[k], k_lo);
        QN_UNROLL
        for (int k = 0; k < nv; k++) q0[k] = vminnmq_f32(q0[k], k_hi);
    }
    QN_UNROLL
    for (int k = 0; k < nv; k++) e[k] = vfmsq_f32(v[k], q0[k], QN_P(s, k));
    QN_UNROLL
    for (int k = 0; k < nv; k++) q[k] = vfmaq_f32(q0[k], e[k], QN_P(r, k));
#undef QN_P
    QN_UNROLL
    for (int k = 0; k < nv; k++) {
        /* float16 rounds quotients from 65520 up to inf: FCVTNS saturates it correctly */
        if (qk == QK_Q_F16) q[k] = qn_round_f16(q[k]);
        if (qk == QK_Q_BF16) q[k] = qn_round_bf16(q[k]);
    }
    if (!single) {
        QN_UNROLL
        for (int k = 0; k < nv; k++) q[k] = vmaxnmq_f32(q[k], k_lo);   /* NaN -> -2^17 */
    }
    QN_UNROLL
    for (int k = 0; k < nv; k++) c[k] = vcvtnq_s32_f32(q[k]);
}

/* The codes of 16 nch conversions (nch = 1 or 2 chunks, parameters pv[j]) to y (see above):
 * cap = qmax - qmin, flip = -qmin & mask. */
QN_INLINE void qn_rstore(int yk, int nch, void *y, size_t c, const int32x4_t q[8],
                         const qn_rpar *pv, uint8x16_t cap, uint8x16_t flip, uint16x8_t cap16,
                         uint16x8_t flip16)
{
    if (yk == QK_Y_B16) {
        uint16x8_t h[4];
        QN_UNROLL
        for (int k = 0; k < 2 * nch; k++)
            h[k] = vcombine_u16(
                vqmovun_s32(vqaddq_s32(q[2 * k], pv[k >> 1].zw[(2 * k) & 3])),
                vqmovun_s32(vqaddq_s32(q[2 * k + 1], pv[k >> 1].zw[(2 * k + 1) & 3])));
        QN_UNROLL
        for (int k = 0; k < 2 * nch; k++)
            vst1q_u16((uint16_t *)y + c + 8 * k, veorq_u16(vminq_u16(h[k], cap16), flip16));
        return;
    }
    int16x8_t h[4];
    uint8x16_t b[2];
    QN_UNROLL
    for (int k = 0; k < 2 * nch; k++)
        h[k] = vcombine_s16(vqmovn_s32(q[2 * k]), vqmovn_s32(q[2 * k + 1]));
    QN_UNROLL
    for (int k = 0; k < 2 * nch; k++)   /* |zp - qmin| <= 383: exact in int16 */
        h[k] = vqaddq_s16(h[k], vcombine_s16(vmovn_s32(pv[k >> 1].zw[(2 * k) & 3]),
                                             vmovn_s32(pv[k >> 1].zw[(2 * k + 1) & 3])));
    QN_UNROLL
    for (int j = 0; j < nch; j++)
        b[j] = vcombine_u8(vqmovun_s16(h[2 * j]), vqmovun_s16(h[2 * j + 1]));
    QN_UNROLL
    for (int j = 0; j < nch; j++) b[j] = veorq_u8(vminq_u8(b[j], cap), flip);
    QN_UNROLL
    for (int j = 0; j < nch; j++) qn_store_bytes(yk, y, c + QN_CHUNK * j, b[j]);
}

QN_INLINE void qn_quant_body_rc(int xk, int qk, int yk, int mode, const void *x, void *yb,
                                size_t i0, size_t i1, const qk_qparams *p)
{
    /* byte kinds: qmax - qmin <= 255; B16: <= 65535 */
    uint32_t span = (uint32_t)(p->qmax - p->qmin), neg = (uint32_t)-p->qmin;
    uint8x16_t cap = vdupq_n_u8((uint8_t)span), flip = vdupq_n_u8((uint8_t)(neg & p->mask));
    uint16x8_t cap16 = vdupq_n_u16((uint16_t)span), flip16 = vdupq_n_u16((uint16_t)neg);
    qn_rpar pv, pp[2];
    int32x4_t c[8];
    if (mode == QN_SINGLE) {
        qn_rpar_entry(&pv, p, 0);
        pp[0] = pp[1] = pv;
        if (p->scale[0] > 0.0f) {
            size_t i = i0;
            for (; i1 - i >= 2 * QN_CHUNK; i += 2 * QN_CHUNK) {   /* two chunks interleaved */
                qn_rquant(xk, qk, 1, 8, x, i, pp, c);
                qn_rstore(yk, 2, yb, i - i0, c, pp, cap, flip, cap16, flip16);
            }
            if (i < i1) {
                qn_rquant(xk, qk, 1, 4, x, i, &pv, c);
                qn_rstore(yk, 1, yb, i - i0, c, &pv, cap, flip, cap16, flip16);
            }
        } else {   /* a negative scale: NaN must go the other way, form B does that */
            for (size_t i = i0; i < i1; i += QN_CHUNK) {
                qn_rquant(xk, qk, 0, 4, x, i, &pv, c);
                qn_rstore(yk, 1, yb, i - i0, c, &pv, cap, flip, cap16, flip16);
            }
        }
    } else if (mode == QN_EACH) {
        for (size_t i = i0; i < i1; i += QN_CHUNK) {
            qn_rpar_each(&pv, p, i);
            qn_rquant(xk, qk, 0, 4, x, i, &pv, c);
            qn_rstore(yk, 1, yb, i - i0, c, &pv, cap, flip, cap16, flip16);
        }
    } else {
        size_t blk = p->blk, e = i0 / blk, off = i0 % blk, cur = (size_t)-1;
        for (size_t i = i0; i < i1; i += QN_CHUNK) {
            if (blk - off >= QN_CHUNK) {
                if (cur != e) qn_rpar_entry(&pv, p, e);   /* once per entry */
                cur = e;
                off += QN_CHUNK;
                if (off == blk) { off = 0; e++; }
            } else {
                qn_rpar_gather(&pv, p, blk, &e, &off);
                cur = (size_t)-1;
            }
            qn_rquant(xk, qk, 0, 4, x, i, &pv, c);
            qn_rstore(yk, 1, yb, i - i0, c, &pv, cap, flip, cap16, flip16);
        }
    }
}

QN_INLINE void qn_quant_body(int xk, int qk, int yk, int mode, const void *x, void *yb,
                             size_t i0, size_t i1, const qk_qparams *p)
{
    /* saturate and the float zero point become constants of separate loops */
    if (!qn_is_fp(yk)) {
        if (qk == QK_Q_F64) qn_quant_body_fp(xk, qk, yk, 1, 0, mode, x, yb, i0, i1, p);
        else qn_quant_body_rc(xk, qk, yk, mode, x, yb, i0, i1, p);
    }
    else if (p->zpf) qn_quant_body_fp(xk, qk, yk, 1, 1, mode, x, yb, i0, i1, p);
    else if (p->saturate || qk_fp_finite(qn_fp_format(yk)))
        qn_quant_body_fp(xk, qk, yk, 1, 0, mode, x, yb, i0, i1, p);
    else qn_quant_body_fp(xk, qk, yk, 0, 0, mode, x, yb, i0, i1, p);
}

QN_INLINE void qn_quant(int xk, int qk, int yk, const void *x, void *y, size_t n,
                        const qk_qparams *p)
{
    if (!qn_is_fp(yk) && qk != QK_Q_F64 && !p->rscale) {
        /* integer outputs without reciprocals: some scale entry is outside the reciprocal
         * form's range (zero, denormal, huge, inf, NaN), which real models do not have; the
         * scalar kernel divides them, and the table stays half the size it would be with a
         * vector division path beside the reciprocal one (as on x86) */
        qk_quant_scalar(xk, qk, yk, x, y, n, p);
        return;
    }
    unsigned per = qn_p6_y(yk) ? 4u : qn_per_byte(yk == QK_Y_P4 || yk == QK_Y_PE2M1, yk == QK_Y_P2);
    size_t head = per > 1 ? (per - p->phase % per) % per : 0;
    if (head > n) head = n;
    size_t i1 = head + (n - head) / QN_CHUNK * QN_CHUNK;
    if (head) qn_quant_part(xk, qk, yk, x, y, 0, head, n, p);
    if (i1 > head) {
        void *yb = per > 1 ? (void *)((uint8_t *)y + qn_goff(qn_p6_y(yk), per, p->phase + head))
                           : (void *)((uint8_t *)y + head * (yk == QK_Y_B16 ? 2u : 1u));
        size_t blk = qn_blk(p->blk);
        if (blk >= n) qn_quant_body(xk, qk, yk, QN_SINGLE, x, yb, head, i1, p);
        else if (blk == 1) qn_quant_body(xk, qk, yk, QN_EACH, x, yb, head, i1, p);
        else qn_quant_body(xk, qk, yk, QN_BLOCKS, x, yb, head, i1, p);
    }
    if (i1 < n) qn_quant_part(xk, qk, yk, x, y, i1, n, n, p);
}

/* ------------------------------------------------------------------ dequantize */

/* Zero points as int32 (codes of <= 16 bits) or, for QK_D_B32, int64 (two per vector). */
/* inputs whose zero point is subtracted in float32 (p->zpf): float6, Quark float16 / bfloat16 */
#define QN_ZF_D(dk) ((dk) >= QK_D_E2M3 || (dk) == QK_D_F16 || (dk) == QK_D_BF16)

typedef struct qn_dpar {
    float32x4_t s[4];
    int32x4_t zp[4];
    int64x2_t zp64[8];
    float32x4_t fz[4];   /* codes of <= 16 bits: 2^23 + zp + flip (qn_dpar_magic) */
    float32x4_t zf[4];   /* QN_ZF_D: the float zero points (p->zpf, else 0), else unused */
} qn_dpar;

/* The magic-number form of code - zp for codes of <= 16 bits: a code c, made non-negative by
 * adding flip (2^(bits-1) for signed codes, else 0), written into the significand of 2^23 is
 * the float 2^23 + c + flip; subtracting 2^23 + zp + flip leaves c - zp exactly (both are
 * integers below 2^24, zp being a code of the same type), +0 when equal: the scalar
 * float(c - zp), without an integer-to-float conversion. */
QN_INLINE void qn_dpar_magic(qn_dpar *v, uint32_t flip)
{
    int32x4_t m = vdupq_n_s32((int32_t)(0x4b000000u + flip));
    QN_UNROLL
    for (int k = 0; k < 4; k++) v->fz[k] = vreinterpretq_f32_s32(vaddq_s32(v->zp[k], m));
}

QN_INLINE void qn_dpar_entry(int dk, qn_dpar *v, const qk_dparams *p, size_t e)
{
    float32x4_t s = vdupq_n_f32(p->scale[e]);
    float32x4_t zf = vdupq_n_f32(QN_ZF_D(dk) && p->zpf ? p->zpf[e] : 0.0f);
    QN_UNROLL
    for (int k = 0; k < 4; k++) { v->s[k] = s; v->zf[k] = zf; }
    if (dk == QK_D_B32) {
        int64x2_t zp = vdupq_n_s64(p->zp64 ? p->zp64[e] : 0);
        QN_UNROLL
        for (int j = 0; j < 8; j++) v->zp64[j] = zp;
    } else {
        int32x4_t zp = vdupq_n_s32(p->zp ? p->zp[e] : 0);
        QN_UNROLL
        for (int k = 0; k < 4; k++) v->zp[k] = zp;
    }
}

QN_INLINE void qn_dpar_each(int dk, qn_dpar *v, const qk_dparams *p, size_t i)
{
    QN_UNROLL
    for (int k = 0; k < 4; k++) {
        v->s[k] = vld1q_f32(p->scale + i + 4 * k);
        v->zf[k] = QN_ZF_D(dk) && p->zpf ? vld1q_f32(p->zpf + i + 4 * k) : vdupq_n_f32(0.0f);
        if (dk == QK_D_B32) {
            v->zp64[2 * k] = p->zp64 ? vld1q_s64(p->zp64 + i + 4 * k) : vdupq_n_s64(0);
            v->zp64[2 * k + 1] = p->zp64 ? vld1q_s64(p->zp64 + i + 4 * k + 2) : vdupq_n_s64(0);
        } else {
            v->zp[k] = p->zp ? vld1q_s32(p->zp + i + 4 * k) : vdupq_n_s32(0);
        }
    }
}

static void qn_dpar_gather(int dk, qn_dpar *v, const qk_dparams *p, size_t blk, size_t *e,
                           size_t *off)
{
    float s[QN_CHUNK], zf[QN_CHUNK];
    int32_t z[QN_CHUNK];
    int64_t z64[QN_CHUNK];
    for (int j = 0; j < QN_CHUNK; j++) {
        s[j] = p->scale[*e];
        zf[j] = QN_ZF_D(dk) && p->zpf ? p->zpf[*e] : 0.0f;
        z[j] = p->zp ? p->zp[*e] : 0;
        z64[j] = p->zp64 ? p->zp64[*e] : 0;
        if (++*off == blk) { *off = 0; ++*e; }
    }
    QN_UNROLL
    for (int k = 0; k < 4; k++) {
        v->s[k] = vld1q_f32(s + 4 * k);
        v->zf[k] = vld1q_f32(zf + 4 * k);
        if (dk == QK_D_B32) {
            v->zp64[2 * k] = vld1q_s64(z64 + 4 * k);
            v->zp64[2 * k + 1] = vld1q_s64(z64 + 4 * k + 2);
        } else {
            v->zp[k] = vld1q_s32(z + 4 * k);
        }
    }
}

/* Codes of chunk c (byte kinds) as bytes, signed ones with flip added (offset binary). */
QN_INLINE uint8x16_t qn_load_obytes(int dk, int sgn, int part, const void *x, size_t c,
                                    uint8x16_t m8, uint8x16_t f8)
{
    const uint8_t *xb = (const uint8_t *)x;
    uint8x16_t b;
    if (dk == QK_D_B8) {
        b = vld1q_u8(xb + c);
        if (part) b = vandq_u8(b, m8);   /* codes of p->bits < 8: the high bits are ignored */
    } else if (dk == QK_D_P4) {
        uint8x8_t raw = vld1_u8(xb + c / 2);
        uint8x8x2_t z = vzip_u8(vand_u8(raw, vdup_n_u8(0x0f)), vshr_n_u8(raw, 4));
        b = vcombine_u8(z.val[0], z.val[1]);   /* element 2k from the low nibble of byte k */
    } else {
        static const uint8_t rep[16] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
        static const int8_t up[16] = {6, 4, 2, 0, 6, 4, 2, 0, 6, 4, 2, 0, 6, 4, 2, 0};
        uint32_t word;
        memcpy(&word, xb + c / 4, 4);
        /* each byte four times, then each copy's code moved to the top and shifted down */
        uint8x16_t t = vqtbl1q_u8(vreinterpretq_u8_u32(vdupq_n_u32(word)), vld1q_u8(rep));
        b = vshrq_n_u8(vshlq_u8(t, vld1q_s8(up)), 6);
    }
    return sgn ? veorq_u8(b, f8) : b;
}

/* 16 codes of chunk c minus the zero points, as float32 (qn_dpar_magic). */
QN_INLINE void qn_magic_codes(int dk, int sgn, int part, const void *x, size_t c,
                              uint8x16_t m8, uint8x16_t f8, const qn_dpar *pv, float32x4_t d[4])
{
    uint16x8_t h[2], mg = vdupq_n_u16(0x4b00);
    if (dk == QK_D_B16) {
        const uint16_t *w = (const uint16_t *)x + c;
        QN_UNROLL
        for (int k = 0; k < 2; k++) {
            h[k] = vld1q_u16(w + 8 * k);
            if (sgn) h[k] = veorq_u16(h[k], vdupq_n_u16(0x8000));
        }
    } else {
        uint8x16_t b = qn_load_obytes(dk, sgn, part, x, c, m8, f8);
        h[0] = vmovl_u8(vget_low_u8(b));
        h[1] = vmovl_high_u8(b);
    }
    uint32x4_t u[4];
    QN_UNROLL
    for (int k = 0; k < 2; k++) {
        u[2 * k] = vreinterpretq_u32_u16(vzip1q_u16(h[k], mg));
        u[2 * k + 1] = vreinterpretq_u32_u16(vzip2q_u16(h[k], mg));
    }
    QN_UNROLL
    for (int k = 0; k < 4; k++) d[k] = vsubq_f32(vreinterpretq_f32_u32(u[k]), pv->fz[k]);
}

static int qn_is_fp_in(int dk)
{
    return dk == QK_D_E4M3FN || dk == QK_D_E5M2 || dk == QK_D_E2M1 || dk == QK_D_PE2M1 ||
           dk >= QK_D_E2M3;
}

/* AMD Quark's float16 / bfloat16 inputs, and every float input (no zero-point magic, no
 * signedness) */
static int qn_is_h_in(int dk) { return dk == QK_D_F16 || dk == QK_D_BF16; }
static int qn_is_float_in(int dk) { return qn_is_fp_in(dk) || qn_is_h_in(dk); }

/* 16 packed float6 codes (12 bytes, 4 groups of 4 codes in 3) -> bytes: each code's 16-bit
 * window (the byte holding its low bits and the next, or zero: index 16) into a 16-bit
 * lane, shifted down by the code's position in it and masked */
QN_INLINE uint8x16_t qn_load6(const uint8_t *x)
{
    static const uint8_t win[2][16] = {{0, 1, 0, 1, 1, 2, 2, 16, 3, 4, 3, 4, 4, 5, 5, 16},
                                       {6, 7, 6, 7, 7, 8, 8, 16, 9, 10, 9, 10, 10, 11, 11, 16}};
    static const int16_t sh[8] = {0, -6, -4, -2, 0, -6, -4, -2};
    uint32_t last;
    memcpy(&last, x + 8, 4);
    uint8x16_t b = vcombine_u8(vld1_u8(x), vreinterpret_u8_u32(vdup_n_u32(last)));
    int16x8_t shv = vld1q_s16(sh);
    uint16x8_t m = vdupq_n_u16(0x3f);
    uint16x8_t lo = vandq_u16(vshlq_u16(vreinterpretq_u16_u8(vqtbl1q_u8(b, vld1q_u8(win[0]))), shv), m);
    uint16x8_t hi = vandq_u16(vshlq_u16(vreinterpretq_u16_u8(vqtbl1q_u8(b, vld1q_u8(win[1]))), shv), m);
    return vcombine_u8(vmovn_u16(lo), vmovn_u16(hi));
}

/* float8 / float4 codes (low bits of each lane) -> float32, exact: qk_fp_to_f32's rule.
 * Normal: rebias. Subnormal or zero: the mantissa times the smallest subnormal. */
QN_INLINE float32x4_t qn_from_fp(uint32x4_t c, int dk)
{
    const int fmt = dk == QK_D_E4M3FN ? QK_FP_E4M3FN : dk == QK_D_E5M2 ? QK_FP_E5M2
                    : dk == QK_D_E2M3 || dk == QK_D_PE2M3 ? QK_FP_E2M3
                    : dk == QK_D_E3M2 || dk == QK_D_PE3M2 ? QK_FP_E3M2 : QK_FP_E2M1;
    const int m = (int)qk_fp_man(fmt), bias = qk_fp_bias(fmt);
    const uint32_t sbit = qk_fp_sbit(fmt);
    if (qk_fp_finite(fmt)) c = vandq_u32(c, vdupq_n_u32(2u * sbit - 1u));   /* high bits ignored */
    uint32x4_t mag = vandq_u32(c, vdupq_n_u32(sbit - 1u));
    uint32x4_t sign = vandq_u32(c, vdupq_n_u32(sbit));   /* shifts take literal counts */
    sign = fmt == QK_FP_E2M1 ? vshlq_n_u32(sign, 28)
           : qk_fp_finite(fmt) ? vshlq_n_u32(sign, 26) : vshlq_n_u32(sign, 24);
    uint32x4_t normal = vaddq_u32(vshlq_u32(mag, vdupq_n_s32(23 - m)),
                                  vdupq_n_u32((uint32_t)(127 - bias) << 23));
    float32x4_t unit = vreinterpretq_f32_u32(vdupq_n_u32((uint32_t)(127 + 1 - bias - m) << 23));
    float32x4_t sub = vmulq_f32(vcvtq_f32_u32(vandq_u32(mag, vdupq_n_u32((1u << m) - 1u))), unit);
    uint32x4_t is_sub = vcltq_u32(mag, vdupq_n_u32(1u << m));
    uint32x4_t r = vbslq_u32(is_sub, vreinterpretq_u32_f32(sub), normal);
    if (fmt == QK_FP_E4M3FN)
        r = vbslq_u32(vceqq_u32(mag, vdupq_n_u32(0x7f)), vdupq_n_u32(0x7fc00000u), r);
    else if (fmt == QK_FP_E5M2)
        r = vbslq_u32(vcgeq_u32(mag, vdupq_n_u32(0x7c)),
                      vbslq_u32(vceqq_u32(mag, vdupq_n_u32(0x7c)), vdupq_n_u32(0x7f800000u),
                                vdupq_n_u32(0x7fc00000u)), r);
    return vreinterpretq_f32_u32(vorrq_u32(r, sign));
}

QN_INLINE void qn_store_d(int ok, void *y, size_t i, const float32x4_t v[4])
{
    if (ok == QK_O_F32) {
        float *d = (float *)y + i;
        QN_UNROLL
        for (int k = 0; k < 4; k++) vst1q_f32(d + 4 * k, v[k]);
    } else {
        uint16_t *d = (uint16_t *)y + i;
        QN_UNROLL
        for (int k = 0; k < 4; k++)
            vst1_u16(d + 4 * k, ok == QK_O_F16 ? qn_to_f16(v[k]) : qn_to_bf16(v[k]));
    }
}

static size_t qn_code_size(int dk)
{
    return dk == QK_D_B16 || qn_is_h_in(dk) ? 2 : dk == QK_D_B32 ? 4 : 1;
}

static void qn_dequant_part(int dk, int ok, const void *x, void *y, size_t a, size_t b,
                            size_t n, const qk_dparams *p)
{
    static const size_t osize[QK_NO] = {4, 2, 2, 1};
    size_t blk = qn_blk(p->blk);
    unsigned per = qn_p6_d(dk) ? 4u : qn_per_byte(dk == QK_D_P4 || dk == QK_D_PE2M1, dk == QK_D_P2);
    size_t xsize = qn_code_size(dk);
    while (a < b) {
        size_t e = blk >= n ? 0 : a / blk;
        size_t end = blk >= n ? b : ((e + 1) * blk < b ? (e + 1) * blk : b);
        qk_dparams q = qk_dparams_at(p, e);
        q.blk = end - a;
        const void *xx;
        if (per > 1) {
            size_t slot = p->phase + a;
            xx = (const uint8_t *)x + qn_goff(qn_p6_d(dk), per, slot);
            q.phase = (unsigned)(slot % per);
        } else {
            xx = (const uint8_t *)x + a * xsize;
        }
        qk_dequant_scalar(dk, ok, xx, (uint8_t *)y + a * osize[ok], end - a, &q);
        a = end;
    }
}

QN_INLINE void qn_dequant_chunk(int dk, int ok, int sgn, int part, const void *xb, void *y,
                                size_t i, size_t i0, uint8x16_t m8, uint8x16_t f8,
                                const qn_dpar *pv)
{
    float32x4_t v[4];
    if (dk == QK_D_B32) {
        const uint32_t *w = (const uint32_t *)xb + (i - i0);
        QN_UNROLL
        for (int k = 0; k < 4; k++) {
            uint32x4_t a = vld1q_u32(w + 4 * k);
            int64x2_t lo, hi;
            if (sgn) {
                lo = vmovl_s32(vget_low_s32(vreinterpretq_s32_u32(a)));
                hi = vmovl_s32(vget_high_s32(vreinterpretq_s32_u32(a)));
            } else {
                lo = vreinterpretq_s64_u64(vmovl_u32(vget_low_u32(a)));
                hi = vreinterpretq_s64_u64(vmovl_u32(vget_high_u32(a)));
            }
            /* the int64 difference is exact in double (qn_dequant checked |zp| <= 2^52), so
             * the one rounding, double -> float, is the int64 -> float rounding */
            float32x2_t fl = vcvt_f32_f64(vcvtq_f64_s64(vsubq_s64(lo, pv->zp64[2 * k])));
            float32x2_t fh = vcvt_f32_f64(vcvtq_f64_s64(vsubq_s64(hi, pv->zp64[2 * k + 1])));
            v[k] = vmulq_f32(vcombine_f32(fl, fh), pv->s[k]);
        }
    } else if (qn_is_float_in(dk)) {
        /* widened exactly: float8 / float4 / float6 codes or Quark's float16 / bfloat16;
         * float8 zero points are zero, float4 ones ignored (no subtraction), float6 and
         * float16 / bfloat16 ones subtracted in float (pv->zf, 0 without one: d - 0 is d for
         * every d, -0 included, and makes a signaling NaN quiet as the scalar kernel does) */
        float32x4_t d[4];
        if (qn_is_h_in(dk)) {
            const uint16_t *w = (const uint16_t *)xb + (i - i0);
            QN_UNROLL
            for (int k = 0; k < 4; k++) {
                uint16x4_t h = vld1_u16(w + 4 * k);
                d[k] = dk == QK_D_F16 ? vcvt_f32_f16(vreinterpret_f16_u16(h)) : qn_bf16_to_f32(h);
            }
        } else {
            uint8x16_t b = qn_p6_d(dk) ? qn_load6((const uint8_t *)xb + (i - i0) / 4 * 3)
                           : qn_load_obytes(dk == QK_D_PE2M1 ? QK_D_P4 : QK_D_B8, 0, 0, xb,
                                            i - i0, vdupq_n_u8(0xff), f8);
            uint16x8_t h0 = vmovl_u8(vget_low_u8(b)), h1 = vmovl_high_u8(b);
            uint32x4_t c[4] = {vmovl_u16(vget_low_u16(h0)), vmovl_high_u16(h0),
                               vmovl_u16(vget_low_u16(h1)), vmovl_high_u16(h1)};
            QN_UNROLL
            for (int k = 0; k < 4; k++) d[k] = qn_from_fp(c[k], dk);
        }
        QN_UNROLL
        for (int k = 0; k < 4; k++) {   /* a NaN x keeps its NaN, as the scalar kernel */
            if (QN_ZF_D(dk)) d[k] = vsubq_f32(d[k], pv->zf[k]);
            v[k] = vbslq_f32(vceqq_f32(d[k], d[k]), vmulq_f32(d[k], pv->s[k]), d[k]);
        }
    } else {
        float32x4_t d[4];   /* code - zp, exact: one rounding, the product */
        qn_magic_codes(dk, sgn, part, xb, i - i0, m8, f8, pv, d);
        QN_UNROLL
        for (int k = 0; k < 4; k++) v[k] = vmulq_f32(d[k], pv->s[k]);
    }
    qn_store_d(ok, y, i, v);
}

/* part: B8 codes of fewer than 8 bits (masked) */
QN_INLINE void qn_dequant_body(int dk, int ok, int sgn, int part, int mode, const void *xb,
                               void *y, size_t i0, size_t i1, const qk_dparams *p)
{
    /* B8: the code's bits; signed codes get flip added (offset binary, qn_dpar_magic) */
    unsigned bits = dk == QK_D_B8 ? (p->bits < 8 ? p->bits : 8) : dk == QK_D_B16 ? 16
                    : dk == QK_D_P4 ? 4 : 2;
    uint32_t flip = sgn && !qn_is_float_in(dk) ? 1u << (bits - 1) : 0u;
    uint8x16_t m8 = vdupq_n_u8((uint8_t)(dk == QK_D_B8 ? (1u << bits) - 1u : 0xffu));
    uint8x16_t f8 = vdupq_n_u8((uint8_t)flip);
    int magic = dk != QK_D_B32 && !qn_is_float_in(dk);
    qn_dpar pv;
    if (mode == QN_SINGLE) {
        qn_dpar_entry(dk, &pv, p, 0);
        if (magic) qn_dpar_magic(&pv, flip);
        for (size_t i = i0; i < i1; i += QN_CHUNK)
            qn_dequant_chunk(dk, ok, sgn, part, xb, y, i, i0, m8, f8, &pv);
    } else if (mode == QN_EACH) {
        for (size_t i = i0; i < i1; i += QN_CHUNK) {
            qn_dpar_each(dk, &pv, p, i);
            if (magic) qn_dpar_magic(&pv, flip);
            qn_dequant_chunk(dk, ok, sgn, part, xb, y, i, i0, m8, f8, &pv);
        }
    } else {
        size_t blk = p->blk, e = i0 / blk, off = i0 % blk;
        for (size_t i = i0; i < i1; i += QN_CHUNK) {
            if (blk - off >= QN_CHUNK) {
                qn_dpar_entry(dk, &pv, p, e);
                off += QN_CHUNK;
                if (off == blk) { off = 0; e++; }
            } else {
                qn_dpar_gather(dk, &pv, p, blk, &e, &off);
            }
            if (magic) qn_dpar_magic(&pv, flip);
            qn_dequant_chunk(dk, ok, sgn, part, xb, y, i, i0, m8, f8, &pv);
        }
    }
}

QN_INLINE void qn_dequant_sgn(int dk, int ok, int sgn, const void *xb, void *y, size_t i0,
                              size_t i1, size_t n, const qk_dparams *p)
{
    size_t blk = qn_blk(p->blk);
    int part = dk == QK_D_B8 && p->bits < 8;
    if (blk >= n) {
        if (part) qn_dequant_body(dk, ok, sgn, 1, QN_SINGLE, xb, y, i0, i1, p);
        else qn_dequant_body(dk, ok, sgn, 0, QN_SINGLE, xb, y, i0, i1, p);
    } else if (blk == 1) {
        qn_dequant_body(dk, ok, sgn, part, QN_EACH, xb, y, i0, i1, p);
    } else {
        qn_dequant_body(dk, ok, sgn, part, QN_BLOCKS, xb, y, i0, i1, p);
    }
}

/* QK_D_B32: whether every zero point of the run keeps code - zp exact in double. Zero points
 * of int32/uint32 tensors always do; anything else goes to the scalar kernel. */
static int qn_zp64_small(const qk_dparams *p, size_t n)
{
    size_t blk = qn_blk(p->blk), ne = n == 0 ? 0 : blk >= n ? 1 : (n - 1) / blk + 1;
    const int64_t lim = (int64_t)1 << 52;
    if (!p->zp64) return 1;
    for (size_t e = 0; e < ne; e++)
        if (p->zp64[e] > lim || p->zp64[e] < -lim) return 0;
    return 1;
}

QN_INLINE void qn_dequant(int dk, int ok, const void *x, void *y, size_t n,
                          const qk_dparams *p)
{
    if (dk == QK_D_B32 && !qn_zp64_small(p, n)) {
        qk_dequant_scalar(dk, ok, x, y, n, p);
        return;
    }
    unsigned per = qn_p6_d(dk) ? 4u : qn_per_byte(dk == QK_D_P4 || dk == QK_D_PE2M1, dk == QK_D_P2);
    size_t head = per > 1 ? (per - p->phase % per) % per : 0;
    if (head > n) head = n;
    size_t i1 = head + (n - head) / QN_CHUNK * QN_CHUNK;
    if (head) qn_dequant_part(dk, ok, x, y, 0, head, n, p);
    if (i1 > head) {
        const void *xb = per > 1 ? (const void *)((const uint8_t *)x +
                                                  qn_goff(qn_p6_d(dk), per, p->phase + head))
                                 : (const void *)((const uint8_t *)x +
                                                  head * qn_code_size(dk));
        /* float codes have no signedness: one copy of the loops */
        if (p->is_signed && !qn_is_float_in(dk)) qn_dequant_sgn(dk, ok, 1, xb, y, head, i1, n, p);
        else qn_dequant_sgn(dk, ok, 0, xb, y, head, i1, n, p);
    }
    if (i1 < n) qn_dequant_part(dk, ok, x, y, i1, n, n, p);
}

/* ------------------------------------------------------------------ min / max */

#define QN_MM_BLOCK 1024   /* elements per NaN check of the min/max pass */

/* NaN-ignoring min and max. Runs of QN_MM_BLOCK elements go through FMIN / FMAX, two
 * instructions per vector, into copies of the accumulators; FMIN and FMAX return NaN when
 * either operand is one, so a NaN anywhere in the run leaves NaN in the copy, and one check
 * per run (a separate pass, not per element) finds it. A run without NaN keeps the copies;
 * a run with one is done again by compare-and-select, which skips NaN (quiet and signalling
 * alike, where FMINNM would return NaN for a signalling one). Signed zeros compare equal, so
 * the lanes may hold either; when a result is zero, its sign is set to the sign of the first
 * zero in x, because the scalar loop keeps the first of equal values. */
static void minmax_f32_neon(const float *x, size_t n, float *mn, float *mx)
{
    float32x4_t lo[4], hi[4];
    QN_UNROLL
    for (int k = 0; k < 4; k++) {
        lo[k] = vdupq_n_f32(INFINITY);
        hi[k] = vdupq_n_f32(-INFINITY);
    }
    size_t i = 0;
    while (n - i >= QN_CHUNK) {
        size_t end = i + (n - i < QN_MM_BLOCK ? (n - i) / QN_CHUNK * QN_CHUNK : QN_MM_BLOCK);
        float32x4_t bl[4], bh[4];
        QN_UNROLL
        for (int k = 0; k < 4; k++) { bl[k] = lo[k]; bh[k] = hi[k]; }
        for (size_t j = i; j < end; j += QN_CHUNK) {
            float32x4x4_t v = vld1q_f32_x4(x + j);   /* one instruction: fewer micro-ops */
            QN_UNROLL
            for (int k = 0; k < 4; k++) {
                bl[k] = vminq_f32(bl[k], v.val[k]);
                bh[k] = vmaxq_f32(bh[k], v.val[k]);
            }
        }
        uint32x4_t ok = vandq_u32(vandq_u32(vceqq_f32(bl[0], bl[0]), vceqq_f32(bl[1], bl[1])),
                                  vandq_u32(vceqq_f32(bl[2], bl[2]), vceqq_f32(bl[3], bl[3])));
        if (vminvq_u32(ok) != 0) {
            QN_UNROLL
            for (int k = 0; k < 4; k++) { lo[k] = bl[k]; hi[k] = bh[k]; }
        } else {
            for (size_t j = i; j < end; j += QN_CHUNK) {
                QN_UNROLL
                for (int k = 0; k < 4; k++) {
                    float32x4_t v = vld1q_f32(x + j + 4 * k);
                    lo[k] = vbslq_f32(vcltq_f32(v, lo[k]), v, lo[k]);
                    hi[k] = vbslq_f32(vcgtq_f32(v, hi[k]), v, hi[k]);
                }
            }
        }
        i = end;
    }
    QN_UNROLL
    for (int k = 1; k < 4; k++) {
        lo[0] = vbslq_f32(vcltq_f32(lo[k], lo[0]), lo[k], lo[0]);
        hi[0] = vbslq_f32(vcgtq_f32(hi[k], hi[0]), hi[k], hi[0]);
    }
    float l[4], h[4], a = INFINITY, b = -INFINITY;
    vst1q_f32(l, lo[0]);
    vst1q_f32(h, hi[0]);
    QN_UNROLL
    for (int k = 0; k < 4; k++) {
        if (l[k] < a) a = l[k];
        if (h[k] > b) b = h[k];
    }
    for (; i < n; i++) {
        if (x[i] < a) a = x[i];
        if (x[i] > b) b = x[i];
    }
    if (a == 0.0f || b == 0.0f) {
        size_t j = 0;
        for (; j + 4 <= n; j += 4)
            if (vmaxvq_u32(vceqzq_f32(vld1q_f32(x + j))) != 0) break;
        while (x[j] != 0.0f) j++;   /* a zero exists at or after j */
        if (a == 0.0f) a = x[j];
        if (b == 0.0f) b = x[j];
    }
    *mn = a;
    *mx = b;
}

/* ------------------------------------------------------------------ AMD Quark outputs */

/* float32 x, float32 quotient to int32 / uint32 (QK_Y_B32), float16 and bfloat16: scalar.c's
 * operations in its order. B32: the true quotient widened to double, clamped there to
 * [qmin64 - zp, qmax64 - zp] (FMAXNM: a NaN quotient gives the low bound, as scalar.c's
 * comparison), rounded half to even, plus the zero point, all exact in double; the low 32
 * bits of the int64 are the code. F16 / BF16: q + zpf in float32 (+0 without a zero point,
 * so -0 becomes +0), one rounding. Blocks shorter than a vector and tails: the scalar kernel. */
typedef struct qn_qk {
    float32x4_t s, zf;
    float64x2_t lo, hi, zp;
} qn_qk;

QN_INLINE void qn_quark_vec(int yk, const float *x, uint8_t *y, const qn_qk *k)
{
    float32x4_t q = vdivq_f32(vld1q_f32(x), k->s);
    if (yk == QK_Y_B32) {
        float64x2_t d0 = vcvt_f64_f32(vget_low_f32(q)), d1 = vcvt_high_f64_f32(q);
        d0 = vaddq_f64(vrndnq_f64(vminnmq_f64(vmaxnmq_f64(d0, k->lo), k->hi)), k->zp);
        d1 = vaddq_f64(vrndnq_f64(vminnmq_f64(vmaxnmq_f64(d1, k->lo), k->hi)), k->zp);
        vst1q_s32((int32_t *)(void *)y, vcombine_s32(vmovn_s64(vcvtq_s64_f64(d0)),
                                                     vmovn_s64(vcvtq_s64_f64(d1))));
    } else {
        q = vaddq_f32(q, k->zf);
        vst1_u16((uint16_t *)(void *)y, yk == QK_Y_F16 ? qn_to_f16(q) : qn_to_bf16(q));
    }
}

QN_INLINE void qn_quark_quant(int yk, const void *xv, void *yv, size_t n, const qk_qparams *p)
{
    const float *x = (const float *)xv;
    uint8_t *y = (uint8_t *)yv;
    size_t blk = qn_blk(p->blk), ys = yk == QK_Y_B32 ? 4u : 2u;
    if (blk < 4 && blk < n) {   /* small blocks: the scalar kernel reads the arrays */
        qk_quant_scalar(QK_X_F32, QK_Q_F32, yk, xv, yv, n, p);
        return;
    }
    for (size_t a = 0, e = 0; a < n; a += blk, e++) {
        size_t b = n - a <= blk ? n : a + blk, i = a;
        int64_t zp = p->zp64 ? p->zp64[e] : 0;
        qn_qk k;
        k.s = vdupq_n_f32(p->scale[e]);
        k.zf = vdupq_n_f32(p->zpf ? p->zpf[e] : 0.0f);
        k.lo = vdupq_n_f64((double)(p->qmin64 - zp));   /* exact: |.| <= 2^33 */
        k.hi = vdupq_n_f64((double)(p->qmax64 - zp));
        k.zp = vdupq_n_f64((double)zp);
        for (; b - i >= 8; i += 8) {
            qn_quark_vec(yk, x + i, y + i * ys, &k);
            qn_quark_vec(yk, x + i + 4, y + (i + 4) * ys, &k);
        }
        for (; b - i >= 4; i += 4) qn_quark_vec(yk, x + i, y + i * ys, &k);
        if (i < b) {
            qk_qparams q = qk_qparams_at(p, e);
            q.blk = b - i;   /* one entry */
            qk_quant_scalar(QK_X_F32, QK_Q_F32, yk, x + i, y + i * ys, b - i, &q);
        }
    }
}

/* ------------------------------------------------------------------ table */

#define QN_QFN(xk, qk, yk) \
    static void neon_q_##xk##_##qk##_##yk(const void *x, void *y, size_t n, const qk_qparams *p) \
    { qn_quant(xk, qk, yk, x, y, n, p); }
#define QN_QFN_Y(xk, qk) QN_QFN(xk, qk, QK_Y_B8) QN_QFN(xk, qk, QK_Y_B16) \
    QN_QFN(xk, qk, QK_Y_P4) QN_QFN(xk, qk, QK_Y_P2)
/* float8 / float4 outputs: float32 x, float32 quotient (the other formats stay scalar) */
QN_QFN(QK_X_F32, QK_Q_F32, QK_Y_E4M3FN)
QN_QFN(QK_X_F32, QK_Q_F32, QK_Y_E5M2)
QN_QFN(QK_X_F32, QK_Q_F32, QK_Y_E2M1)
QN_QFN(QK_X_F32, QK_Q_F32, QK_Y_PE2M1)
QN_QFN(QK_X_F32, QK_Q_F32, QK_Y_E2M3)
QN_QFN(QK_X_F32, QK_Q_F32, QK_Y_PE2M3)
QN_QFN(QK_X_F32, QK_Q_F32, QK_Y_E3M2)
QN_QFN(QK_X_F32, QK_Q_F32, QK_Y_PE3M2)
/* Only the rows a call reaches without `precision` (the operands' own quotient precision):
 * the others (a float16 / bfloat16 quotient of other operands, float64 quotients of int32
 * operands) take the scalar kernel, which keeps the static library of a scalar + NEON build
 * within its 0.4 MB budget for calls that are rare and already slow in Python. */
QN_QFN_Y(QK_X_F32, QK_Q_F32)
QN_QFN_Y(QK_X_F16, QK_Q_F32)
QN_QFN_Y(QK_X_F16, QK_Q_F16)
QN_QFN_Y(QK_X_BF16, QK_Q_F32)
QN_QFN_Y(QK_X_BF16, QK_Q_BF16)
QN_QFN_Y(QK_X_I32, QK_Q_F32)

#define QN_DFN(dk, ok) \
    static void neon_d_##dk##_##ok(const void *x, void *y, size_t n, const qk_dparams *p) \
    { qn_dequant(dk, ok, x, y, n, p); }
#define QN_DFN_O(dk) QN_DFN(dk, QK_O_F32) QN_DFN(dk, QK_O_F16) QN_DFN(dk, QK_O_BF16)
QN_DFN_O(QK_D_B8)
QN_DFN_O(QK_D_B16)
QN_DFN_O(QK_D_P4)
QN_DFN_O(QK_D_P2)
QN_DFN_O(QK_D_B32)
QN_DFN_O(QK_D_E4M3FN)
QN_DFN_O(QK_D_E5M2)
QN_DFN_O(QK_D_E2M1)
QN_DFN_O(QK_D_PE2M1)
QN_DFN_O(QK_D_E2M3)
QN_DFN_O(QK_D_PE2M3)
QN_DFN_O(QK_D_E3M2)
QN_DFN_O(QK_D_PE3M2)
/* Quark float16 / bfloat16 inputs to float32 only (Quark's schema); float16 / bfloat16 outputs
 * of them take the scalar kernel: their 4.7 KB would push the static scalar + NEON example
 * over a 64 KB page step of its file (its budget is 0.4 MB) */
QN_DFN(QK_D_F16, QK_O_F32)
QN_DFN(QK_D_BF16, QK_O_F32)

#define QN_QUARK_QFN(name, yk) \
    static void neon_q_quark_##name(const void *x, void *y, size_t n, const qk_qparams *p) \
    { qn_quark_quant(yk, x, y, n, p); }
QN_QUARK_QFN(b32, QK_Y_B32)
QN_QUARK_QFN(f16, QK_Y_F16)
QN_QUARK_QFN(bf16, QK_Y_BF16)

#define QN_QROW(xk, qk) { neon_q_##xk##_##qk##_QK_Y_B8, neon_q_##xk##_##qk##_QK_Y_B16, \
                          neon_q_##xk##_##qk##_QK_Y_P4, neon_q_##xk##_##qk##_QK_Y_P2 }
#define QN_QNULL { NULL, NULL, NULL, NULL }
/* the f32 / f32 row with the float and Quark outputs: NULL (scalar) for fnuz */
#define QN_QROW_FP { neon_q_QK_X_F32_QK_Q_F32_QK_Y_B8, neon_q_QK_X_F32_QK_Q_F32_QK_Y_B16, \
    neon_q_QK_X_F32_QK_Q_F32_QK_Y_P4, neon_q_QK_X_F32_QK_Q_F32_QK_Y_P2, \
    neon_q_QK_X_F32_QK_Q_F32_QK_Y_E4M3FN, NULL, neon_q_QK_X_F32_QK_Q_F32_QK_Y_E5M2, NULL, \
    neon_q_QK_X_F32_QK_Q_F32_QK_Y_E2M1, neon_q_QK_X_F32_QK_Q_F32_QK_Y_PE2M1, neon_q_quark_b32, \
    neon_q_quark_f16, neon_q_quark_bf16, \
    neon_q_QK_X_F32_QK_Q_F32_QK_Y_E2M3, neon_q_QK_X_F32_QK_Q_F32_QK_Y_PE2M3, \
    neon_q_QK_X_F32_QK_Q_F32_QK_Y_E3M2, neon_q_QK_X_F32_QK_Q_F32_QK_Y_PE3M2 }
#define QN_DROW(dk) { neon_d_##dk##_QK_O_F32, neon_d_##dk##_QK_O_F16, neon_d_##dk##_QK_O_BF16 }

const qk_table qk_neon_table = {
    "neon",
    { { QN_QROW_FP, QN_QNULL, QN_QNULL, QN_QNULL },
      { QN_QROW(QK_X_F16, QK_Q_F32), QN_QROW(QK_X_F16, QK_Q_F16), QN_QNULL, QN_QNULL },
      { QN_QROW(QK_X_BF16, QK_Q_F32), QN_QNULL, QN_QROW(QK_X_BF16, QK_Q_BF16), QN_QNULL },
      { QN_QROW(QK_X_I32, QK_Q_F32), QN_QNULL, QN_QNULL, QN_QNULL } },
    { QN_DROW(QK_D_B8), QN_DROW(QK_D_B16), QN_DROW(QK_D_P4), QN_DROW(QK_D_P2),
      QN_DROW(QK_D_B32), QN_DROW(QK_D_E4M3FN), { NULL, NULL, NULL, NULL },
      QN_DROW(QK_D_E5M2), { NULL, NULL, NULL, NULL }, QN_DROW(QK_D_E2M1),
      QN_DROW(QK_D_PE2M1), { neon_d_QK_D_F16_QK_O_F32, NULL, NULL, NULL },
      { neon_d_QK_D_BF16_QK_O_F32, NULL, NULL, NULL },
      QN_DROW(QK_D_E2M3), QN_DROW(QK_D_PE2M3), QN_DROW(QK_D_E3M2), QN_DROW(QK_D_PE3M2) },
    minmax_f32_neon,
};
