/* Test-only: AVX-512 intrinsics on a CPU without AVX-512, for checking csrc/kernels/avx512.c
 * with -DQSIMD_TEST_SIMDE. SIMDe (0.7.4 in Debian 12) provides most of them; the few it
 * lacks are defined here. Each is built from two native AVX2 / F16C halves where such an
 * instruction exists, so that rounding, NaN and saturation behaviour is the hardware's,
 * and otherwise as a plain loop following Intel's documented operation. */
#ifndef QSIMD_TEST_SIMDE_AVX512_H
#define QSIMD_TEST_SIMDE_AVX512_H

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#include <immintrin.h>   /* the native AVX2 / F16C halves (the test is built with -mavx2 -mf16c) */
#include <stdint.h>
#include <string.h>

#if !defined(__AVX2__) || !defined(__F16C__)
#error "build the SIMDe AVX-512 test with -mavx2 -mfma -mf16c"
#endif

/* 512-bit value <-> two native 256-bit halves, through memory (SIMDe's layout is opaque). */
#define QSD_SPLIT_PS(a, lo, hi)                                         \
    float qsd_f_[16];                                                   \
    simde_mm512_storeu_ps(qsd_f_, (a));                                 \
    __m256 lo = _mm256_loadu_ps(qsd_f_), hi = _mm256_loadu_ps(qsd_f_ + 8)
#define QSD_SPLIT_SI(a, lo, hi)                                         \
    int32_t qsd_i_[16];                                                 \
    simde_mm512_storeu_si512(qsd_i_, (a));                              \
    __m256i lo = _mm256_loadu_si256((const __m256i *)qsd_i_),           \
            hi = _mm256_loadu_si256((const __m256i *)(qsd_i_ + 8))

static inline simde__m512i qsd_join_si(__m256i lo, __m256i hi)
{
    int32_t r[16];
    _mm256_storeu_si256((__m256i *)r, lo);
    _mm256_storeu_si256((__m256i *)(r + 8), hi);
    return simde_mm512_loadu_si512(r);
}

static inline simde__m512 qsd_join_ps(__m256 lo, __m256 hi)
{
    float r[16];
    _mm256_storeu_ps(r, lo);
    _mm256_storeu_ps(r + 8, hi);
    return simde_mm512_loadu_ps(r);
}

/* The definitions below replace any of the same name: the native header declares some of
 * them (clang: as macros), but those need a real AVX-512 target. */
static inline simde__m512i qsd_mm512_cvtps_epi32(simde__m512 a)
{
    QSD_SPLIT_PS(a, lo, hi);
    return qsd_join_si(_mm256_cvtps_epi32(lo), _mm256_cvtps_epi32(hi));
}

static inline simde__m512 qsd_mm512_cvtepi32_ps(simde__m512i a)
{
    QSD_SPLIT_SI(a, lo, hi);
    return qsd_join_ps(_mm256_cvtepi32_ps(lo), _mm256_cvtepi32_ps(hi));
}

static inline simde__m512 qsd_mm512_cvtph_ps(simde__m256i a)
{
    __m128i h[2];
    simde_mm256_storeu_si256((simde__m256i *)h, a);
    return qsd_join_ps(_mm256_cvtph_ps(_mm_loadu_si128(h)), _mm256_cvtph_ps(_mm_loadu_si128(h + 1)));
}

/* imm8 is always _MM_FROUND_TO_NEAREST_INT in the kernels */
static inline simde__m256i qsd_mm512_cvtps_ph(simde__m512 a)
{
    QSD_SPLIT_PS(a, lo, hi);
    __m128i h[2];
    _mm_storeu_si128(h, _mm256_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128(h + 1, _mm256_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT));
    return simde_mm256_loadu_si256((const simde__m256i *)h);
}

/* 16 bytes -> 16 int32: the native form widens the low 8 bytes of an xmm register */
static inline simde__m512i qsd_mm512_cvtepu8_epi32(simde__m128i a)
{
    unsigned char b[16];
    __m128i lo, hi;
    simde_mm_storeu_si128((simde__m128i *)b, a);
    lo = _mm_loadl_epi64((const __m128i *)b);
    hi = _mm_loadl_epi64((const __m128i *)(b + 8));
    return qsd_join_si(_mm256_cvtepu8_epi32(lo), _mm256_cvtepu8_epi32(hi));
}
static inline simde__m512i qsd_mm512_cvtepi8_epi32(simde__m128i a)
{
    unsigned char b[16];
    __m128i lo, hi;
    simde_mm_storeu_si128((simde__m128i *)b, a);
    lo = _mm_loadl_epi64((const __m128i *)b);
    hi = _mm_loadl_epi64((const __m128i *)(b + 8));
    return qsd_join_si(_mm256_cvtepi8_epi32(lo), _mm256_cvtepi8_epi32(hi));
}
/* 32 bytes (16 x 16-bit) -> 16 int32 */
static inline simde__m512i qsd_mm512_cvtepu16_epi32(simde__m256i a)
{
    __m128i h[2];
    simde_mm256_storeu_si256((simde__m256i *)h, a);
    return qsd_join_si(_mm256_cvtepu16_epi32(_mm_loadu_si128(h)),
                       _mm256_cvtepu16_epi32(_mm_loadu_si128(h + 1)));
}
static inline simde__m512i qsd_mm512_cvtepi16_epi32(simde__m256i a)
{
    __m128i h[2];
    simde_mm256_storeu_si256((simde__m256i *)h, a);
    return qsd_join_si(_mm256_cvtepi16_epi32(_mm_loadu_si128(h)),
                       _mm256_cvtepi16_epi32(_mm_loadu_si128(h + 1)));
}

/* vpmovdb / vpmovdw: truncation to the low 8 / 16 bits (no native AVX2 form) */
static inline simde__m128i qsd_mm512_cvtepi32_epi8(simde__m512i a)
{
    int32_t v[16];
    unsigned char r[16];
    simde_mm512_storeu_si512(v, a);
    for (int i = 0; i < 16; i++) r[i] = (unsigned char)((uint32_t)v[i] & 0xffu);
    return simde_mm_loadu_si128((const simde__m128i *)r);
}
static inline simde__m256i qsd_mm512_cvtepi32_epi16(simde__m512i a)
{
    int32_t v[16];
    uint16_t r[16];
    simde_mm512_storeu_si512(v, a);
    for (int i = 0; i < 16; i++) r[i] = (uint16_t)((uint32_t)v[i] & 0xffffu);
    return simde_mm256_loadu_si256((const simde__m256i *)r);
}

#undef _mm512_cvtps_epi32
#define _mm512_cvtps_epi32(a) qsd_mm512_cvtps_epi32(a)
#undef _mm512_cvtepi32_ps
#define _mm512_cvtepi32_ps(a) qsd_mm512_cvtepi32_ps(a)
#undef _mm512_cvtph_ps
#define _mm512_cvtph_ps(a) qsd_mm512_cvtph_ps(a)
#undef _mm512_cvtps_ph
#define _mm512_cvtps_ph(a, imm) ((void)(imm), qsd_mm512_cvtps_ph(a))
#undef _mm512_cvtepu8_epi32
#define _mm512_cvtepu8_epi32(a) qsd_mm512_cvtepu8_epi32(a)
#undef _mm512_cvtepi8_epi32
#define _mm512_cvtepi8_epi32(a) qsd_mm512_cvtepi8_epi32(a)
#undef _mm512_cvtepu16_epi32
#define _mm512_cvtepu16_epi32(a) qsd_mm512_cvtepu16_epi32(a)
#undef _mm512_cvtepi16_epi32
#define _mm512_cvtepi16_epi32(a) qsd_mm512_cvtepi16_epi32(a)
#undef _mm512_cvtepi32_epi8
#define _mm512_cvtepi32_epi8(a) qsd_mm512_cvtepi32_epi8(a)
#undef _mm512_cvtepi32_epi16
#define _mm512_cvtepi32_epi16(a) qsd_mm512_cvtepi32_epi16(a)
/* masked loads SIMDe lacks: only the selected lanes are read, the others are zero */
static inline simde__m512 qsd_mm512_maskz_loadu_ps(uint16_t k, const void *p)
{
    float v[16];
    for (int i = 0; i < 16; i++) v[i] = (k >> i) & 1 ? ((const float *)p)[i] : 0.0f;
    return simde_mm512_loadu_ps(v);
}
static inline simde__m512i qsd_mm512_maskz_loadu_epi32(uint16_t k, const void *p)
{
    int32_t v[16];
    for (int i = 0; i < 16; i++) v[i] = (k >> i) & 1 ? ((const int32_t *)p)[i] : 0;
    return simde_mm512_loadu_si512(v);
}
#undef _mm512_maskz_loadu_ps
#define _mm512_maskz_loadu_ps(k, p) qsd_mm512_maskz_loadu_ps(k, p)
#undef _mm512_maskz_loadu_epi32
#define _mm512_maskz_loadu_epi32(k, p) qsd_mm512_maskz_loadu_epi32(k, p)
/* SIMDe's native alias for _mm512_madd_epi16 has the masked form's four parameters */
#undef _mm512_madd_epi16
#define _mm512_madd_epi16(a, b) simde_mm512_madd_epi16(a, b)

/* double conversions SIMDe lacks (avx512.c's AMD Quark helpers), from native 256-bit halves */
static inline simde__m512d qsd_join_pd(__m256d lo, __m256d hi)
{
    double r[8];
    _mm256_storeu_pd(r, lo);
    _mm256_storeu_pd(r + 4, hi);
    return simde_mm512_loadu_pd(r);
}
#define QSD_SPLIT_PD(a, lo, hi)                                         \
    double qsd_d_[8];                                                   \
    simde_mm512_storeu_pd(qsd_d_, (a));                                 \
    __m256d lo = _mm256_loadu_pd(qsd_d_), hi = _mm256_loadu_pd(qsd_d_ + 4)
static inline simde__m512d qsd_mm512_cvtps_pd(simde__m256 a)
{
    float f[8];
    simde_mm256_storeu_ps(f, a);
    return qsd_join_pd(_mm256_cvtps_pd(_mm_loadu_ps(f)), _mm256_cvtps_pd(_mm_loadu_ps(f + 4)));
}
static inline simde__m512d qsd_mm512_cvtepi32_pd(simde__m256i a)
{
    int32_t v[8];
    simde_mm256_storeu_si256(v, a);
    return qsd_join_pd(_mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i *)v)),
                       _mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i *)(v + 4))));
}
static inline simde__m256i qsd_mm512_cvtpd_epi32(simde__m512d a)
{
    int32_t v[8];
    QSD_SPLIT_PD(a, lo, hi);
    _mm_storeu_si128((__m128i *)v, _mm256_cvtpd_epi32(lo));
    _mm_storeu_si128((__m128i *)(v + 4), _mm256_cvtpd_epi32(hi));
    return simde_mm256_loadu_si256(v);
}
static inline simde__m256 qsd_mm512_cvtpd_ps(simde__m512d a)
{
    float f[8];
    QSD_SPLIT_PD(a, lo, hi);
    _mm_storeu_ps(f, _mm256_cvtpd_ps(lo));
    _mm_storeu_ps(f + 4, _mm256_cvtpd_ps(hi));
    return simde_mm256_loadu_ps(f);
}
/* rounding to an integer (scale 0), the mode from imm's low bits as _mm256_round_pd's */
static inline simde__m512d qsd_mm512_roundscale_pd(simde__m512d a, int imm)
{
    QSD_SPLIT_PD(a, lo, hi);
    (void)imm;   /* only _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC is used */
    return qsd_join_pd(_mm256_round_pd(lo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                       _mm256_round_pd(hi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#undef _mm512_cvtps_pd
#define _mm512_cvtps_pd(a) qsd_mm512_cvtps_pd(a)
#undef _mm512_cvtepi32_pd
#define _mm512_cvtepi32_pd(a) qsd_mm512_cvtepi32_pd(a)
#undef _mm512_cvtpd_epi32
#define _mm512_cvtpd_epi32(a) qsd_mm512_cvtpd_epi32(a)
#undef _mm512_cvtpd_ps
#define _mm512_cvtpd_ps(a) qsd_mm512_cvtpd_ps(a)
#undef _mm512_roundscale_pd
#define _mm512_roundscale_pd(a, imm) qsd_mm512_roundscale_pd(a, imm)


/* VRCP14PS: Intel documents only a relative error under 2^-14; any such approximation must
 * do for qv_rcp, so this one differs from the hardware's: 1 / a with 9 low bits cleared. */
static inline simde__m512 qsd_mm512_rcp14_ps(simde__m512 a)
{
    float f[16];
    simde_mm512_storeu_ps(f, a);
    for (int i = 0; i < 16; i++) {
        uint32_t u;
        float r = 1.0f / f[i];
        memcpy(&u, &r, 4);
        if ((u & 0x7f800000u) != 0x7f800000u) u &= ~0x1ffu;
        memcpy(&f[i], &u, 4);
    }
    return simde_mm512_loadu_ps(f);
}
#define _mm512_rcp14_ps(a) qsd_mm512_rcp14_ps(a)

#endif
