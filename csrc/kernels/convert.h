/* Portable scalar conversions between float32 and float16 / bfloat16, and the exact
 * round-half-to-even used by every scalar path. Bit-level, so results do not depend on the
 * compiler, the FPU control word or the target's native half-precision support. */
#ifndef QSIMD_CONVERT_H
#define QSIMD_CONVERT_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* For the per-element helpers that must fold their constant format arguments. */
#if defined(__GNUC__) || defined(__clang__)
#define QK_ALWAYS_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define QK_ALWAYS_INLINE static __forceinline
#else
#define QK_ALWAYS_INLINE static inline
#endif

/* The SIMD kernels' loops over a chunk's four vectors, unrolled (-O2 does not), so that the
 * chunk's vectors and parameters stay in registers. */
#if defined(__GNUC__) && !defined(__clang__)
#define QD_UNROLL _Pragma("GCC unroll 4")
#define QD_UNROLL8 _Pragma("GCC unroll 8")
#define QD_UNROLL12 _Pragma("GCC unroll 12")
#elif defined(__clang__)
#define QD_UNROLL _Pragma("unroll 4")
#define QD_UNROLL8 _Pragma("unroll 8")
#define QD_UNROLL12 _Pragma("unroll 12")
#else
#define QD_UNROLL
#define QD_UNROLL8
#define QD_UNROLL12
#endif

static inline uint32_t qk_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float qk_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float qk_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f)                        /* inf / NaN: keep the payload */
        return qk_bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0) return qk_bits_f32(sign);
        /* subnormal: man * 2^-24, exact in float32 */
        float v = (float)man * 5.9604644775390625e-08f;
        return sign ? -v : v;
    }
    return qk_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

/* Round to nearest even; overflow -> inf; NaN stays NaN with the quiet bit set (as F16C). */
static inline uint16_t qk_f32_to_f16(float f)
{
    uint32_t u = qk_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);   /* rounds to >= 65520: inf */
    if (a < 0x38800000u) {                                      /* below the smallest normal */
        /* subnormal half: value / 2^-24 rounded to an integer, ties to even. The float
         * addition does the rounding: 0.5f is 2^-1 so adding aligns the binary point. */
        float v = qk_bits_f32(a) * 16777216.0f;                 /* exact: scale by 2^24 */
        float r = (v + 8388608.0f) - 8388608.0f;                /* rint for 0 <= v < 2^23 */
        return (uint16_t)(sign | (uint16_t)r);
    }
    /* normal: rebias and round the 13 dropped bits to nearest even */
    uint32_t m = a - 0x38000000u;                               /* exponent -112 */
    m += 0x0fffu + ((m >> 13) & 1u);
    return (uint16_t)(sign | (m >> 13));
}

static inline float qk_bf16_to_f32(uint16_t b) { return qk_bits_f32((uint32_t)b << 16); }

/* Round to nearest even; NaN -> sign | 0x7fc0 (ml_dtypes' canonical quiet NaN). */
static inline uint16_t qk_f32_to_bf16(float f)
{
    uint32_t u = qk_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(((u >> 16) & 0x8000u) | 0x7fc0u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float qk_round_f16(float f) { return qk_f16_to_f32(qk_f32_to_f16(f)); }
static inline float qk_round_bf16(float f) { return qk_bf16_to_f32(qk_f32_to_bf16(f)); }

/* Round half to even for |v| < 2^22 (callers clamp first). Adding 1.5 * 2^23 leaves no
 * fraction bits, so the FPU's default rounding does the work. */
static inline float qk_rint_small(float v)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    return (v + 12582912.0f) - 12582912.0f;  /* never reassociated without -ffast-math */
#else
    return rintf(v);
#endif
}

static inline double qk_rint_small64(double v)   /* |v| < 2^51 */
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    return (v + 6755399441055744.0) - 6755399441055744.0;
#else
    return rint(v);
#endif
}

/* ---- float8 / float4 / e8m0 (ONNX FLOAT8E4M3FN ... FLOAT4E2M1, FLOAT8E8M0) ----
 * Bit patterns follow ml_dtypes 0.6 exactly; tests/sweeps/sweep_float8.py checks every
 * float32 input against it. Integer arithmetic only, so no FPU mode can change a result. */
enum { QK_FP_E4M3FN, QK_FP_E4M3FNUZ, QK_FP_E5M2, QK_FP_E5M2FNUZ, QK_FP_E2M1,
       QK_FP_E2M3, QK_FP_E3M2 };   /* float6 (opset 28): ml_dtypes float6_e2m3fn / e3m2fn */

/* Formats without inf or NaN (float4, float6): they always saturate, and NaN becomes the
 * zero of the opposite sign (ml_dtypes). */
QK_ALWAYS_INLINE int qk_fp_finite(int fmt)
{
    return fmt == QK_FP_E2M1 || fmt == QK_FP_E2M3 || fmt == QK_FP_E3M2;
}

QK_ALWAYS_INLINE uint32_t qk_fp_sbit(int fmt)   /* the sign bit of a code */
{
    return fmt == QK_FP_E2M1 ? 0x8u : (fmt == QK_FP_E2M3 || fmt == QK_FP_E3M2) ? 0x20u : 0x80u;
}

QK_ALWAYS_INLINE unsigned qk_fp_man(int fmt)   /* mantissa bits */
{
    return fmt == QK_FP_E2M1 ? 1u
           : (fmt == QK_FP_E5M2 || fmt == QK_FP_E5M2FNUZ || fmt == QK_FP_E3M2) ? 2u : 3u;
}

QK_ALWAYS_INLINE int qk_fp_bias(int fmt)
{
    switch (fmt) {
    case QK_FP_E4M3FN: return 7;
    case QK_FP_E4M3FNUZ: return 8;
    case QK_FP_E5M2: return 15;
    case QK_FP_E5M2FNUZ: return 16;
    case QK_FP_E3M2: return 3;
    default: return 1;   /* E2M1, E2M3 */
    }
}

QK_ALWAYS_INLINE uint32_t qk_fp_maxcode(int fmt)   /* largest finite magnitude code */
{
    switch (fmt) {
    case QK_FP_E4M3FN: return 0x7e;   /* 448; 0x7f is NaN */
    case QK_FP_E5M2: return 0x7b;     /* 57344; 0x7c is inf */
    case QK_FP_E2M1: return 0x7;      /* 6 */
    case QK_FP_E2M3: return 0x1f;     /* 7.5 */
    case QK_FP_E3M2: return 0x1f;     /* 28 */
    default: return 0x7f;             /* fnuz: 240 / 57344; 0x80 is the only NaN */
    }
}

/* float32 -> code, round to nearest even. saturate: out-of-range and inf give +-max
 * (float4 and float6 always saturate: they have no inf or NaN); otherwise overflow of the ROUNDED value
 * gives inf (e5m2) or NaN. NaN: e4m3fn 0x7f|sign, e5m2 0x7e|sign, fnuz 0x80, and float4 /
 * float6 (no NaN) give the zero of the OPPOSITE sign, as ml_dtypes does. fnuz has no -0. */
QK_ALWAYS_INLINE uint8_t qk_f32_to_fp(float f, int fmt, int saturate)
{
    uint32_t u = qk_f32_bits(f), a = u & 0x7fffffffu, neg = u >> 31, c;
    unsigned m = qk_fp_man(fmt);
    int bias = qk_fp_bias(fmt);
    uint32_t maxc = qk_fp_maxcode(fmt), sbit = qk_fp_sbit(fmt);
    int fnuz = fmt == QK_FP_E4M3FNUZ || fmt == QK_FP_E5M2FNUZ;
    if (a > 0x7f800000u) {
        if (fnuz) return 0x80;
        if (qk_fp_finite(fmt)) return (uint8_t)(neg ? 0u : sbit);
        return (uint8_t)((fmt == QK_FP_E5M2 ? 0x7eu : 0x7fu) | (neg << 7));
    }
    int e = (int)(a >> 23);
    if (a == 0x7f800000u) {
        c = maxc + 1;   /* inf: treated as an overflow */
    } else if (e >= 128 - bias) {
        /* normal in the target: rebias the exponent, round the dropped bits to even */
        unsigned sh = 23u - m;
        uint32_t r = a - ((uint32_t)(127 - bias) << 23);
        r += ((1u << (sh - 1)) - 1u) + ((r >> sh) & 1u);
        c = r >> sh;   /* a carry moves into the exponent; above maxc is an overflow */
    } else {
        /* subnormal in the target: value / 2^(1 - bias - m), rounded to an integer */
        uint32_t mant = e ? (a & 0x7fffffu) | 0x800000u : a & 0x7fffffu;
        int sh = 151 - bias - (int)m - (e ? e : 1);   /* >= 20 here */
        if (sh >= 25) {
            c = 0;   /* below half the smallest subnormal (mant < 2^24) */
        } else {
            uint32_t half = 1u << (sh - 1), rem = mant & ((half << 1) - 1u);
            c = mant >> sh;
            if (rem > half || (rem == half && (c & 1u))) c++;
        }
    }
    if (c > maxc) {
        if (saturate || qk_fp_finite(fmt)) c = maxc;
        else if (fnuz) return 0x80;
        else return (uint8_t)((fmt == QK_FP_E5M2 ? 0x7cu : 0x7fu) | (neg << 7));
    }
    if (fnuz && c == 0) return 0;   /* -0 becomes +0 */
    return (uint8_t)(c | (neg ? sbit : 0u));
}

/* code -> float32, exact. NaN codes give the quiet NaN 0x7fc00000 with the code's sign
 * (fnuz: 0xffc00000, as ml_dtypes), inf codes give inf. Float4 reads the low nibble only,
 * float6 the low 6 bits. */
QK_ALWAYS_INLINE float qk_fp_to_f32(uint8_t code, int fmt)
{
    unsigned m = qk_fp_man(fmt);
    int bias = qk_fp_bias(fmt);
    uint32_t sbit = qk_fp_sbit(fmt);
    uint32_t c = code & (2u * sbit - 1u), mag = c & (sbit - 1u);
    uint32_t sign = (c & sbit) ? 0x80000000u : 0u;
    /* both forms, then a select: no data-dependent branch. Normal: rebias the exponent.
     * Subnormal or zero: man * 2^(1 - bias - m), exact and computed on normal floats. */
    uint32_t normal = sign | ((mag << (23u - m)) + ((uint32_t)(127 - bias) << 23));
    uint32_t unit = (uint32_t)(127 + 1 - bias - (int)m) << 23;
    uint32_t sub = sign | qk_f32_bits((float)(mag & ((1u << m) - 1u)) * qk_bits_f32(unit));
    uint32_t r = (mag >> m) ? normal : sub;
    if (fmt == QK_FP_E4M3FNUZ || fmt == QK_FP_E5M2FNUZ)
        r = c == 0x80 ? 0xffc00000u : r;
    else if (fmt == QK_FP_E4M3FN)
        r = mag == 0x7f ? sign | 0x7fc00000u : r;
    else if (fmt == QK_FP_E5M2)
        r = mag >= 0x7c ? sign | (mag == 0x7c ? 0x7f800000u : 0x7fc00000u) : r;
    return qk_bits_f32(r);
}

/* float8e8m0 (ml_dtypes float8_e8m0fnu): 2^(code - 127), 0xff is NaN. */
static inline float qk_e8m0_to_f32(uint8_t c)
{
    if (c == 0xff) return qk_bits_f32(0x7fc00000u);
    return qk_bits_f32(c ? (uint32_t)c << 23 : 0x00400000u);   /* 2^-127 is subnormal */
}

/* float32 -> e8m0 as ml_dtypes rounds it: a normal input rounds up when its mantissa is
 * >= 1.5 (ties away from zero) and past 2^127 becomes NaN; a subnormal input becomes
 * 2^-126 when it exceeds 2^-127 and 2^-127 otherwise. Zero, negatives, inf and NaN have no
 * encoding: 0xff. */
static inline uint8_t qk_f32_to_e8m0(float f)
{
    uint32_t u = qk_f32_bits(f);
    if (u == 0 || u >= 0x7f800000u) return 0xff;   /* +0, inf, NaN and every sign bit */
    if (u < 0x00800000u) return u > 0x00400000u ? 1 : 0;
    return (uint8_t)((u + 0x00400000u) >> 23);      /* 0x7f400000 and above -> 0xff */
}

#endif
