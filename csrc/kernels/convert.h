/* Portable scalar conversions between float32 and float16 / bfloat16, and the exact
 * round-half-to-even used by every scalar path. Bit-level, so results do not depend on the
 * compiler, the FPU control word or the target's native half-precision support. */
#ifndef QSIMD_CONVERT_H
#define QSIMD_CONVERT_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

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

#endif
