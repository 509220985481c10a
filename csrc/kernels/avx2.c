/* AVX2 + FMA + F16C kernels: the vector layer of the generic driver (generic/driver.h)
 * over 8 float32 lanes. FMA serves only the exact reciprocal form of the quotient
 * (docs/EXACT-DIVISION.md); every other product is rounded on its own, as in scalar.c. */
#include <immintrin.h>
#include <string.h>

#include "kernels.h"
#include "convert.h"
#include "x86_bytes.h"

#define QV_W 8
#define QV_ISA avx2
#define QV_FMA 1
#define QV_F16 1
#define QV_FP 1        /* float8 / float6 / float4 outputs and inputs */
#define QV_QUARK 1     /* AMD Quark's 32-bit and half-precision types */
#define QV_F6 1        /* qv_to_f6 / qv_f6_rec: float6 codes by the hardware's rounding */
#define QV_FP8_REC 0   /* float8 divides: the integer conversion is port-bound, vdivps runs beside */

typedef __m256 vf;
typedef __m256i vi;
typedef __m256d vd;   /* QV_W / 2 doubles (AMD Quark's 32-bit types, driver.h) */

static inline vf qv_set1(float f) { return _mm256_set1_ps(f); }
static inline vi qv_set1_i(int32_t v) { return _mm256_set1_epi32(v); }
static inline vd qv_set1_d(double v) { return _mm256_set1_pd(v); }
static inline vf qv_loadu_f(const float *p) { return _mm256_loadu_ps(p); }
static inline vi qv_loadu_i(const int32_t *p) { return _mm256_loadu_si256((const __m256i *)p); }
static inline void qv_storeu_f(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline void qv_storeu_i(void *p, vi v) { _mm256_storeu_si256((__m256i *)p, v); }
static inline vf qv_add_f(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vd qv_add_d(vd a, vd b) { return _mm256_add_pd(a, b); }
static inline vf qv_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
#if (defined(__GNUC__) || defined(__clang__)) && defined(__AVX2__)   /* (not under SIMDe) */
#define QV_OPAQUE 1   /* (generic/layout.h) */
static inline vf qv_opaque(vf v) { __asm__("" : "+v"(v)); return v; }
#endif
static inline vf qv_div(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf qv_min(vf a, vf b) { return _mm256_min_ps(a, b); }   /* a < b ? a : b */
static inline vf qv_max(vf a, vf b) { return _mm256_max_ps(a, b); }   /* a > b ? a : b */
static inline vf qv_fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }    /* a*b+c */
static inline vf qv_fnmadd(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }  /* c-a*b */
static inline vi qv_add_i(vi a, vi b) { return _mm256_add_epi32(a, b); }
static inline vi qv_sub_i(vi a, vi b) { return _mm256_sub_epi32(a, b); }
static inline vi qv_or_i(vi a, vi b) { return _mm256_or_si256(a, b); }
static inline vi qv_and_i(vi a, vi b) { return _mm256_and_si256(a, b); }
static inline vi qv_xor_i(vi a, vi b) { return _mm256_xor_si256(a, b); }
static inline vf qv_cvt_i2f(vi a) { return _mm256_cvtepi32_ps(a); }

/* qv_blend: lanes [0, k) of a, the rest of b. qv_splice: the last k lanes of a, then the
 * first QV_W - k of b (0 < k < QV_W). */
static inline __m256i qv_lanes_below(unsigned k)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline vi qv_blend_i(vi a, vi b, unsigned k) { return _mm256_blendv_epi8(b, a, qv_lanes_below(k)); }
static inline vf qv_blend_f(vf a, vf b, unsigned k)
{
    return _mm256_blendv_ps(b, a, _mm256_castsi256_ps(qv_lanes_below(k)));
}
static inline vi qv_splice_i(vi a, vi b, unsigned k)
{
    /* lane i takes lane (i - k) mod 8 of both: a's lanes 8-k.. land first, b's 0.. after */
    __m256i idx = _mm256_and_si256(_mm256_sub_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                                    _mm256_set1_epi32((int)k)),
                                   _mm256_set1_epi32(7));
    return qv_blend_i(_mm256_permutevar8x32_epi32(a, idx), _mm256_permutevar8x32_epi32(b, idx), k);
}
static inline vf qv_splice_f(vf a, vf b, unsigned k)
{
    return _mm256_castsi256_ps(qv_splice_i(_mm256_castps_si256(a), _mm256_castps_si256(b), k));
}
/* lane i = lane idx[i] of v (0 <= idx[i] < QV_W) */
static inline vf qv_perm_f(vf v, vi idx) { return _mm256_permutevar8x32_ps(v, idx); }
static inline vi qv_perm_i(vi v, vi idx) { return _mm256_permutevar8x32_epi32(v, idx); }

static inline vf qv_load_x(int xk, const void *x)
{
    switch (xk) {
    case QK_X_F32: return _mm256_loadu_ps((const float *)x);
    case QK_X_F16: return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)x));   /* exact */
    case QK_X_BF16:   /* bfloat16 is the high half of a float32 */
        return _mm256_castsi256_ps(
            _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)x)), 16));
    default: return _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)x));
    }
}

/* float16 round trip, nearest-even: the value qk_round_f16 gives (NaN stays NaN). */
static inline vf qv_round_f16(vf v)
{
    return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

/* bfloat16 round to nearest even, as qk_round_bf16; NaN stays NaN (the carry of the
 * rounding could turn a NaN into inf or wrap its sign). */
static inline vf qv_round_bf16(vf v)
{
    __m256i u = _mm256_castps_si256(v);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff)));
    r = _mm256_and_si256(r, _mm256_set1_epi32((int32_t)0xffff0000u));
    return _mm256_blendv_ps(_mm256_castsi256_ps(r), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

/* The quotient's bounds and conversions (driver.h's qd_qraw). Form A bounds x above at
 * xl = 2^17 s (min passes a NaN x as its second operand); the conversion turns NaN and
 * everything beyond int32 into INT_MIN, which the stores saturate to qmin. A quotient that
 * may be +inf (form B, float16 rounding) is first bounded at 2^17 (min keeps NaN again). */
static inline vf qv_bound_x(vf n, vf xl) { return _mm256_min_ps(xl, n); }
static inline vi qv_cvt_a(vf q, int mayinf)
{
    return _mm256_cvtps_epi32(mayinf ? _mm256_min_ps(_mm256_set1_ps(131072.0f), q) : q);
}
static inline vi qv_cvt_raw(vf q) { return qv_cvt_a(q, 1); }
/* AMD Quark's int32 / uint32 (driver.h): d clamped to [lo, hi] (max first: NaN gives lo),
 * rounded half to even. */
static inline vd qv_clamp_rint_d(vd d, vd lo, vd hi)
{
    return _mm256_round_pd(_mm256_min_pd(_mm256_max_pd(d, lo), hi),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/* 4 QV_W codes of a byte output kind, as packed from r0..r3 by packs/packus (dwords in the
 * order r0[0:4] r1[0:4] r2[0:4] r3[0:4] r0[4:8] ...), to y. */
static inline void qv_store_bytes(int yk, void *y, __m256i p)
{
    __m256i c = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    if (yk == QK_Y_B8) {
        _mm256_storeu_si256((__m256i *)y, c);
    } else if (yk == QK_Y_P4) {
        __m256i w = _mm256_maddubs_epi16(c, _mm256_set1_epi16(0x1001));
        w = _mm256_permute4x64_epi64(_mm256_packus_epi16(w, w), 0x08);
        _mm_storeu_si128((__m128i *)y, _mm256_castsi256_si128(w));
    } else {
        __m256i w = _mm256_maddubs_epi16(c, _mm256_set1_epi16(0x0401));
        __m256i d = _mm256_madd_epi16(w, _mm256_set1_epi32(0x00100001));
        d = _mm256_packs_epi32(d, d);
        d = _mm256_packus_epi16(d, d);
        d = _mm256_permutevar8x32_epi32(d, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
        _mm_storel_epi64((__m128i *)y, _mm256_castsi256_si128(d));
    }
}


/* Integer stores of 4 QV_W raw codes c (int32, any value: NaN and everything below the range
 * arrive far below it) with zero points z. Byte kinds: the zero point, biased by -qmin and
 * packed to int16 lanes like the codes, is added with int16 saturation after the first pack;
 * packus saturates to [0, 255], min to qmax - qmin (cap), and xor with flip (-qmin & mask)
 * turns the biased value into the two's complement code's low bits. The full uint8 range
 * needs neither cap nor flip, the full int8 range is a signed pack of the codes plus the
 * zero point. B16: clamped in int32 to [qmin - zp, qmax - zp], then the zero point added. */
typedef struct qv_qc {
    __m256i qmin16, cap, flip, lo, hi;
    int how;   /* 0: full uint8 range, 1: full int8 range, 2: general */
} qv_qc;

static inline qv_qc qv_qc_init(int32_t qmin, int32_t qmax, uint32_t mask)
{
    qv_qc c;
    c.qmin16 = _mm256_set1_epi16((short)qmin);
    c.cap = _mm256_set1_epi8((char)(qmax - qmin));
    c.flip = _mm256_set1_epi8((char)((uint32_t)-qmin & mask));
    c.lo = _mm256_set1_epi32(qmin);
    c.hi = _mm256_set1_epi32(qmax);
    c.how = qmax - qmin != 255 ? 2 : qmin ? 1 : 0;
    return c;
}

static inline void qv_qstore4(int yk, void *y, const vi c[4], const vi z[4], const qv_qc *k)
{
    if (yk == QK_Y_B16) {
        __m256i r[4], ff = _mm256_set1_epi32(0xffff);
        QD_UNROLL
        for (int v = 0; v < 4; v++) {
            __m256i t = _mm256_max_epi32(c[v], _mm256_sub_epi32(k->lo, z[v]));
            r[v] = _mm256_and_si256(_mm256_add_epi32(_mm256_min_epi32(t, _mm256_sub_epi32(k->hi, z[v])),
                                                     z[v]), ff);
        }
        /* packus works per 128-bit lane: put the 64-bit quarters back in order */
        __m256i a = _mm256_packus_epi32(r[0], r[1]), b = _mm256_packus_epi32(r[2], r[3]);
        _mm256_storeu_si256((__m256i *)y, _mm256_permute4x64_epi64(a, 0xd8));
        _mm256_storeu_si256((__m256i *)y + 1, _mm256_permute4x64_epi64(b, 0xd8));
        return;
    }
    __m256i za = _mm256_packs_epi32(z[0], z[1]), zb = _mm256_packs_epi32(z[2], z[3]);
    if (k->how != 1) {
        za = _mm256_sub_epi16(za, k->qmin16);
        zb = _mm256_sub_epi16(zb, k->qmin16);
    }
    __m256i a = _mm256_adds_epi16(_mm256_packs_epi32(c[0], c[1]), za);
    __m256i b = _mm256_adds_epi16(_mm256_packs_epi32(c[2], c[3]), zb);
    __m256i p;
    if (k->how == 1) {
        p = _mm256_packs_epi16(a, b);
    } else {
        p = _mm256_packus_epi16(a, b);
        if (k->how == 2) p = _mm256_xor_si256(_mm256_min_epu8(p, k->cap), k->flip);
    }
    qv_store_bytes(yk, y, p);
}

/* QV_W codes as int32: the low `bits` bits; signed 8- and 16-bit codes when sgn is 1; sgn 2:
 * sign-extended from bit `bits - 1` by h (that bit). */
static inline vi qv_load_codes(int dk, unsigned bits, int sgn, vi h, const void *x)
{
    __m256i c;
    if (dk == QK_D_B16) {
        __m128i w = _mm_loadu_si128((const __m128i *)x);
        if (sgn == 1) return _mm256_cvtepi16_epi32(w);
        c = _mm256_cvtepu16_epi32(w);
    } else if (dk == QK_D_B8) {
        __m128i b = _mm_loadl_epi64((const __m128i *)x);
        if (sgn == 1) return _mm256_cvtepi8_epi32(b);
        c = _mm256_cvtepu8_epi32(b);
        if (bits < 8) c = _mm256_and_si256(c, _mm256_set1_epi32((1 << bits) - 1));
    } else if (dk == QK_D_P4) {
        c = _mm256_cvtepu8_epi32(qx_unpack4(qx_load32(x)));
    } else {
        c = _mm256_cvtepu8_epi32(qx_unpack2(qx_load16(x)));
    }
    return sgn == 2 ? _mm256_sub_epi32(_mm256_xor_si256(c, h), h) : c;   /* sign-extends a field, h its top bit */
}

/* bfloat16 bits (in the low half of each lane) of v, as qk_f32_to_bf16. */
static inline vi qv_bf16_bits(vf v)
{
    __m256i u = _mm256_castps_si256(v);
    __m256i hi = _mm256_srli_epi32(u, 16);
    __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_and_si256(hi, _mm256_set1_epi32(1)),
                                                     _mm256_set1_epi32(0x7fff)));
    r = _mm256_srli_epi32(r, 16);
    __m256i nan = _mm256_or_si256(_mm256_and_si256(hi, _mm256_set1_epi32(0x8000)),
                                  _mm256_set1_epi32(0x7fc0));
    return _mm256_blendv_epi8(r, nan, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}

static inline void qv_store_out(int ok, void *y, vf v)
{
    if (ok == QK_O_F32) {
        _mm256_storeu_ps((float *)y, v);
    } else if (ok == QK_O_F16) {
        _mm_storeu_si128((__m128i *)y, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    } else {
        __m256i b = qv_bf16_bits(v);
        _mm_storeu_si128((__m128i *)y, _mm_packus_epi32(_mm256_castsi256_si128(b),
                                                        _mm256_extracti128_si256(b, 1)));
    }
}

/* ---- float8 / float4 / float6 ---- */

/* float32 -> float8 / float4 codes, one per lane (qk_f32_to_fp). Normal results: rebias
 * and round the dropped bits to even in integers. Subnormal results: adding 2^(24-bias-m),
 * whose last place is the smallest subnormal, lets the FPU round |q| to that unit. Every
 * compared value is below 2^31, so the signed compares are exact. */
static inline vi qv_to_fp(vf q, int fmt, int sat)
{
    const int m = (int)qk_fp_man(fmt), bias = qk_fp_bias(fmt);
    const int32_t maxc = (int32_t)qk_fp_maxcode(fmt);
    __m256i u = _mm256_castps_si256(q);
    __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    __m256i sign = _mm256_and_si256(u, _mm256_set1_epi32((int32_t)0x80000000u));
    __m256i down = _mm256_set1_epi32(23 - m);
    __m256i r = _mm256_sub_epi32(a, _mm256_set1_epi32((127 - bias) << 23));
    __m256i odd = _mm256_and_si256(_mm256_srlv_epi32(r, down), _mm256_set1_epi32(1));
    r = _mm256_add_epi32(r, _mm256_add_epi32(_mm256_set1_epi32((1 << (22 - m)) - 1), odd));
    __m256i cn = _mm256_srlv_epi32(r, down);
    __m256 magic = _mm256_castsi256_ps(_mm256_set1_epi32((127 + 24 - bias - m) << 23));
    __m256i cs = _mm256_sub_epi32(
        _mm256_castps_si256(_mm256_add_ps(_mm256_castsi256_ps(a), magic)),
        _mm256_castps_si256(magic));
    __m256i c = _mm256_blendv_epi8(
        cn, cs, _mm256_cmpgt_epi32(_mm256_set1_epi32((128 - bias) << 23), a));
    __m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000));   /* inf: via cn */
    if (sat || qk_fp_finite(fmt))
        c = _mm256_min_epi32(c, _mm256_set1_epi32(maxc));
    else
        c = _mm256_blendv_epi8(c, _mm256_set1_epi32(fmt == QK_FP_E5M2 ? 0x7c : 0x7f),
                               _mm256_cmpgt_epi32(c, _mm256_set1_epi32(maxc)));
    if (qk_fp_finite(fmt)) {   /* float4 / float6, no NaN: the zero of the opposite sign */
        c = _mm256_andnot_si256(nan, c);
        sign = _mm256_xor_si256(sign, _mm256_and_si256(nan, _mm256_set1_epi32((int32_t)0x80000000u)));
        return _mm256_or_si256(c, _mm256_srli_epi32(sign, fmt == QK_FP_E2M1 ? 28 : 26));
    }
    c = _mm256_blendv_epi8(c, _mm256_set1_epi32(fmt == QK_FP_E5M2 ? 0x7e : 0x7f), nan);
    return _mm256_or_si256(c, _mm256_srli_epi32(sign, 24));
}

/* Codes (low bits of each lane) -> float32, exactly (qk_fp_to_f32). */
static inline vf qv_from_fp(vi c, int fmt)
{
    const int m = (int)qk_fp_man(fmt), bias = qk_fp_bias(fmt);
    const int32_t sbit = (int32_t)qk_fp_sbit(fmt);
    if (qk_fp_finite(fmt)) c = _mm256_and_si256(c, _mm256_set1_epi32(2 * sbit - 1));   /* high bits ignored */
    __m256i mag = _mm256_and_si256(c, _mm256_set1_epi32(sbit - 1));
    __m256i sign = _mm256_and_si256(c, _mm256_set1_epi32(sbit));
    sign = _mm256_slli_epi32(sign, fmt == QK_FP_E2M1 ? 28 : qk_fp_finite(fmt) ? 26 : 24);
    __m256i normal = _mm256_add_epi32(_mm256_sllv_epi32(mag, _mm256_set1_epi32(23 - m)),
                                      _mm256_set1_epi32((127 - bias) << 23));
    __m256 unit = _mm256_castsi256_ps(_mm256_set1_epi32((127 + 1 - bias - m) << 23));
    __m256 sub = _mm256_mul_ps(
        _mm256_cvtepi32_ps(_mm256_and_si256(mag, _mm256_set1_epi32((1 << m) - 1))), unit);
    __m256i r = _mm256_blendv_epi8(normal, _mm256_castps_si256(sub),
                                   _mm256_cmpgt_epi32(_mm256_set1_epi32(1 << m), mag));
    if (fmt == QK_FP_E4M3FN)
        r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc00000),
                               _mm256_cmpeq_epi32(mag, _mm256_set1_epi32(0x7f)));
    else if (fmt == QK_FP_E5M2)
        r = _mm256_blendv_epi8(
            r,
            _mm256_blendv_epi8(_mm256_set1_epi32(0x7fc00000), _mm256_set1_epi32(0x7f800000),
                               _mm256_cmpeq_epi32(mag, _mm256_set1_epi32(0x7c))),
            _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7b)));
    return _mm256_castsi256_ps(_mm256_or_si256(r, sign));
}

static inline vf qv_keep_nan(vf d, vf p)
{
    return _mm256_blendv_ps(p, d, _mm256_cmp_ps(d, d, _CMP_UNORD_Q));
}

/* 64 bytes from an L1 buffer to a cache line of y, bypassing the caches (driver.h) */
static inline void qv_stream64(void *y, const void *src)
{
    _mm256_stream_si256((__m256i *)y, _mm256_loadu_si256((const __m256i *)src));
    _mm256_stream_si256((__m256i *)y + 1, _mm256_loadu_si256((const __m256i *)src + 1));
}

/* float6 codes (driver.h), as avx512.c's qv_to_f6: t = min(|qm|, max) scaled by 2^(m - E),
 * E = max(exponent of t, emin), and rounded by the conversion (MXCSR: nearest-even, as
 * qv_cvt); the code is that integer plus (E - emin) << m. Sign from qs; NaN qs gives the zero
 * of the opposite sign. */
static inline vi qv_to_f6(vf qm, vf qs, int fmt)
{
    const int m = (int)qk_fp_man(fmt), emin = 1 - qk_fp_bias(fmt);
    const float top = fmt == QK_FP_E2M3 ? 7.5f : 28.0f;
    const __m256i ebits = _mm256_set1_epi32((127 + emin) << 23), six = _mm256_set1_epi32(0x20);
    __m256 t = _mm256_min_ps(_mm256_and_ps(qm, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))),
                             _mm256_set1_ps(top));   /* NaN -> top */
    __m256i ec = _mm256_max_epi32(_mm256_and_si256(_mm256_castps_si256(t),
                                                   _mm256_set1_epi32(0x7f800000)), ebits);
    __m256i top_e = _mm256_set1_epi32(qv_bits_i32((254u + (unsigned)m) << 23));
    __m256 f = _mm256_castsi256_ps(_mm256_sub_epi32(top_e, ec));
    __m256i c = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(t, f)),
                                 _mm256_srli_epi32(_mm256_sub_epi32(ec, ebits), 23 - m));
    __m256i sg = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(qs), 26), six);
    __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(qs, qs, _CMP_UNORD_Q));
    sg = _mm256_xor_si256(sg, _mm256_and_si256(nan, six));
    return _mm256_or_si256(_mm256_andnot_si256(nan, c), sg);
}

/* float6 codes of x / s by the exact reciprocal form with rn = -1/s, as avx512.c's qv_f6_rec
 * (which says why): t = min(|q1|, max) with NaN x -> 0 (a NaN q0n; infinite x gives a NaN q1,
 * which the min saturates), C = 2^(E - m + 23) + A ulps from an 8-entry table indexed by t's
 * biased exponent, the complement of q0n's sign at bit 5 of C, w = t + C rounded once. With
 * q0 (the packed path) the sign is left out and *q0 gets q0n's bits (qv_store6_4). */
#define QV6_E(i, emin) ((((i) + 4) & 7) - 3 < (emin) ? (emin) : (((i) + 4) & 7) - 3)
#define QV6_C(i, m, emin) (((QV6_E(i, emin) - (m) + 150) << 23) + ((QV6_E(i, emin) - (emin)) << (m)))
#define QV6_8(M, m, emin) M(0, m, emin), M(1, m, emin), M(2, m, emin), M(3, m, emin), \
    M(4, m, emin), M(5, m, emin), M(6, m, emin), M(7, m, emin)
static const int32_t qv6_c[2][8] = {{QV6_8(QV6_C, 3, 0)}, {QV6_8(QV6_C, 2, -2)}};
static inline vi qv_f6_rec(vf x, vf s, vf rn, int fmt, vi *q0)
{
    const int emin = 1 - qk_fp_bias(fmt), g = fmt == QK_FP_E2M3 ? 0 : 1;
    const float top = fmt == QK_FP_E2M3 ? 7.5f : 28.0f;
    __m256 q0n = _mm256_mul_ps(x, rn);
    __m256 q1n = _mm256_fmadd_ps(_mm256_fmadd_ps(q0n, s, x), rn, q0n);
    __m256 t = _mm256_min_ps(_mm256_and_ps(q1n, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))),
                             _mm256_set1_ps(top));   /* NaN -> top */
    t = _mm256_andnot_ps(_mm256_cmp_ps(q0n, q0n, _CMP_UNORD_Q), t);   /* NaN x -> 0 */
    __m256i ix = _mm256_srli_epi32(_mm256_max_epi32(_mm256_castps_si256(t),
                                                    _mm256_set1_epi32((127 + emin) << 23)), 23);
    __m256i c = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)qv6_c[g]), ix);
    if (q0)
        *q0 = _mm256_castps_si256(q0n);
    else
        c = _mm256_or_si256(c, _mm256_andnot_si256(_mm256_srli_epi32(_mm256_castps_si256(q0n), 26),
                                                   _mm256_set1_epi32(0x20)));
    __m256 w = _mm256_add_ps(t, _mm256_castsi256_ps(c));
    return _mm256_and_si256(_mm256_castps_si256(w), _mm256_set1_epi32(0x3f));
}

/* q1 of the reciprocal form, or q0 = x * r where q1 is +-0 or NaN (driver.h) */
static inline vf qv_fix_recip(vf q1, vf q0)
{
    return _mm256_blendv_ps(q1, q0, _mm256_cmp_ps(q1, _mm256_setzero_ps(), _CMP_EQ_UQ));
}

/* Packed float6 (qv_store6_4): 4 codes -> c0 | c1 << 6 | c2 << 12 | c3 << 18, whose three
 * low bytes are ONNX's group. maddubs pairs codes (c0 + 64 c1 < 2^12), madd pairs the pairs
 * (+ 4096 x), a byte shuffle keeps three bytes of each dword. */
static inline __m128i qv6_squeeze128(__m128i c)   /* 16 code bytes -> 12 bytes, low first */
{
    __m128i w = _mm_maddubs_epi16(c, _mm_set1_epi16(0x4001));
    __m128i d = _mm_madd_epi16(w, _mm_set1_epi32(0x10000001));
    return _mm_shuffle_epi8(d, _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1,
                                             -1));
}

/* 4 QV_W codes (clean, < 64) -> 24 bytes, with the complement of bit 31 of s[0..3] added as
 * each code's sign (all ones: the codes have their signs): the signed packs keep the signs
 * of s at bit 7 of each byte, in the codes' order. */
static inline void qv_store6_4(unsigned char *y, const vi r[4], const vi s[4])
{
    __m256i p = _mm256_packus_epi16(_mm256_packs_epi32(r[0], r[1]), _mm256_packs_epi32(r[2], r[3]));
    __m256i sg = _mm256_packs_epi16(_mm256_packs_epi32(s[0], s[1]), _mm256_packs_epi32(s[2], s[3]));
    p = _mm256_blendv_epi8(_mm256_or_si256(p, _mm256_set1_epi8(0x20)), p, sg);
    __m256i c = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    uint64_t hi[2];   /* the second 12 bytes follow the first 12 */
    _mm_storeu_si128((__m128i *)hi, qv6_squeeze128(_mm256_extracti128_si256(c, 1)));
    _mm_storeu_si128((__m128i *)y, qv6_squeeze128(_mm256_castsi256_si128(c)));
    memcpy(y + 12, hi, 12);
}

/* 6 bytes -> QV_W codes: lane i gets bits 6i .. 6i+5 (each 128-bit half takes one group) */
static inline vi qv_load6(const unsigned char *x)
{
    uint64_t v = 0;
    memcpy(&v, x, 6);
    __m256i b = _mm256_broadcastsi128_si256(_mm_cvtsi64_si128((long long)v));
    __m256i g = _mm256_shuffle_epi8(b, _mm256_setr_epi8(0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2, -1, 0,
                                                        1, 2, -1, 3, 4, 5, -1, 3, 4, 5, -1, 3, 4,
                                                        5, -1, 3, 4, 5, -1));
    g = _mm256_srlv_epi32(g, _mm256_setr_epi32(0, 6, 12, 18, 0, 6, 12, 18));
    return _mm256_and_si256(g, _mm256_set1_epi32(0x3f));
}

/* AMD Quark's 32-bit types (driver.h): qv_f2d / qv_i2d widen half h of a vector to double,
 * qv_d2f / qv_d2i narrow two halves back (qv_d2i: whole numbers inside int32). */
static inline vd qv_f2d(vf v, int h)
{
    return _mm256_cvtps_pd(h ? _mm256_extractf128_ps(v, 1) : _mm256_castps256_ps128(v));
}
static inline vd qv_i2d(vi v, int h)
{
    return _mm256_cvtepi32_pd(h ? _mm256_extracti128_si256(v, 1) : _mm256_castsi256_si128(v));
}
static inline vf qv_d2f(vd a, vd b)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(a)), _mm256_cvtpd_ps(b), 1);
}
static inline vi qv_d2i(vd a, vd b)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm256_cvtpd_epi32(a)),
                                   _mm256_cvtpd_epi32(b), 1);
}

#include "generic/driver.h"
#include "generic/minmax.h"
#include "generic/entries.h"

#define QK_ENTRY_avx2(kind, ...) QD_##kind##FN(__VA_ARGS__)
#include "generic/registry.def"
#undef QK_ENTRY_avx2
#define QK_ENTRY_avx2(kind, ...) QD_##kind##SET(__VA_ARGS__)
const qk_table qk_avx2_table = {
    .name = "avx2",
#include "generic/registry.def"
    .minmax_f32 = QD_N(minmax),
    .recip_f32 = QD_N(recip),
    .widen_zp = QD_N(widen),
    .minmax_cols = QD_N(minmax_cols),
    .minmax_groups = QD_N(minmax_groups),
};
