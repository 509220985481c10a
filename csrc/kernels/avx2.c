/* AVX2 + FMA + F16C kernels: 8 float32 lanes. FMA serves only the exact reciprocal form of
 * the quotient (qv_fmadd / qv_fnmadd, docs/EXACT-DIVISION.md); every other product is
 * rounded on its own, as in scalar.c. The run drivers live in x86_template.h; this file is
 * only the vector layer. */
#include <immintrin.h>
#include <string.h>

#include "kernels.h"
#include "convert.h"
#include "x86_bytes.h"

#define QV_W 8
#define QV_ISA avx2   /* table entries are named avx2_... (QT_N in x86_bytes.h) */
#define QV_HAVE_F6 1   /* qv_to_f6: float6 codes by the hardware's rounding */
#define QV_HAVE_F6R 1  /* qv_f6_rec: float6 codes of the reciprocal form, negated reciprocal */
#define QV_HAVE_F16C 1
#define QV_HAVE_FMA 1

typedef __m256 vf;
typedef __m256i vi;
typedef __m256i vm;   /* byte-output mask, as 16-bit lanes */

static inline vf qv_set1(float f) { return _mm256_set1_ps(f); }
static inline vi qv_set1_i(int32_t v) { return _mm256_set1_epi32(v); }
static inline vf qv_loadu_f(const float *p) { return _mm256_loadu_ps(p); }
static inline vi qv_loadu_i(const int32_t *p) { return _mm256_loadu_si256((const __m256i *)p); }
static inline void qv_storeu_f(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline void qv_storeu_i(int32_t *p, vi v) { _mm256_storeu_si256((__m256i *)p, v); }
static inline vf qv_div(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf qv_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf qv_max(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf qv_min(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vi qv_cvt(vf a) { return _mm256_cvtps_epi32(a); }   /* MXCSR: nearest-even */
static inline vf qv_cvt_i2f(vi a) { return _mm256_cvtepi32_ps(a); }
static inline vi qv_add_i(vi a, vi b) { return _mm256_add_epi32(a, b); }
static inline vi qv_sub_i(vi a, vi b) { return _mm256_sub_epi32(a, b); }
static inline vm qv_mask(uint32_t m) { return _mm256_set1_epi16((short)m); }
static inline vf qv_fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }    /* a*b+c */
static inline vf qv_fnmadd(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }  /* c-a*b */
static inline vi qv_max_i(vi a, vi b) { return _mm256_max_epi32(a, b); }
static inline vi qv_min_i(vi a, vi b) { return _mm256_min_epi32(a, b); }

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

/* Codes are within [qmin, qmax] (the clamp made sure), so the packs below are exact: to
 * int16 with signed saturation, then the low byte (masked) of each. */
static inline void qv_store1(int yk, void *y, vi r, vm mask)
{
    __m128i lo = _mm256_castsi256_si128(r), hi = _mm256_extracti128_si256(r, 1);
    if (yk == QK_Y_B16) {
        __m128i ff = _mm_set1_epi32(0xffff);
        _mm_storeu_si128((__m128i *)y,
                         _mm_packus_epi32(_mm_and_si128(lo, ff), _mm_and_si128(hi, ff)));
        return;
    }
    __m128i w = _mm_and_si128(_mm_packs_epi32(lo, hi), _mm256_castsi256_si128(mask));
    __m128i b = _mm_packus_epi16(w, w);
    if (yk == QK_Y_B8) _mm_storel_epi64((__m128i *)y, b);
    else if (yk == QK_Y_P4) qx_store32(y, qx_pack4(b));
    else qx_store16(y, qx_pack2(b));
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

static inline void qv_store4(int yk, void *y, vi r0, vi r1, vi r2, vi r3, vm mask)
{
    if (yk == QK_Y_B16) {
        /* packus works per 128-bit lane: put the 64-bit quarters back in order */
        __m256i ff = _mm256_set1_epi32(0xffff);
        __m256i a = _mm256_packus_epi32(_mm256_and_si256(r0, ff), _mm256_and_si256(r1, ff));
        __m256i b = _mm256_packus_epi32(_mm256_and_si256(r2, ff), _mm256_and_si256(r3, ff));
        _mm256_storeu_si256((__m256i *)y, _mm256_permute4x64_epi64(a, 0xd8));
        _mm256_storeu_si256((__m256i *)y + 1, _mm256_permute4x64_epi64(b, 0xd8));
        return;
    }
    qv_store_bytes(yk, y, _mm256_packus_epi16(_mm256_and_si256(_mm256_packs_epi32(r0, r1), mask),
                                              _mm256_and_si256(_mm256_packs_epi32(r2, r3), mask)));
}

/* The exact reciprocal form's store for byte kinds (x86_template.h). r0..r3 are rounded
 * quotients: never above 2^17, INT_MIN for NaN and quotients far below. The zero point,
 * biased by -qmin (zp - qmin) and packed to int16 lanes like the codes (za for r0 r1, zb for
 * r2 r3), is added with int16 saturation after the first pack; packus then saturates to
 * [0, 255], min to qmax - qmin (cap), and xor with flip (-qmin, 0 unsigned) turns the biased
 * value into the two's complement code's low bits. A few byte operations per 4 QV_W codes
 * instead of a clamp and an add per vector. */
static inline vi qv_set1_w(int v) { return _mm256_set1_epi16((short)v); }
static inline vi qv_set1_b(int v) { return _mm256_set1_epi8((char)v); }
/* Lane i = e[i >> lg] (lg = 1..3: entries of 2, 4 or 8 elements), reading only the
 * 8 >> lg entries needed. */
static inline __m256i qv_rep_idx(unsigned lg, __m256i *mask)
{
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    *mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(8 >> lg), lane);
    return _mm256_srl_epi32(lane, _mm_cvtsi32_si128((int)lg));
}
static inline vf qv_rep_f(const float *e, unsigned lg)
{
    __m256i m, idx = qv_rep_idx(lg, &m);
    return _mm256_permutevar8x32_ps(_mm256_maskload_ps(e, m), idx);
}
static inline vi qv_rep_i(const int32_t *e, unsigned lg)
{
    __m256i m, idx = qv_rep_idx(lg, &m);
    return _mm256_permutevar8x32_epi32(_mm256_maskload_epi32(e, m), idx);
}
static inline vi qv_pack_w(vi a, vi b) { return _mm256_packs_epi32(a, b); }   /* int32 -> int16 lanes */
static inline void qv_store4_lean(int yk, void *y, vi r0, vi r1, vi r2, vi r3, vi za, vi zb,
                                  vi cap, vi flip, int how)
{
    __m256i a = _mm256_adds_epi16(_mm256_packs_epi32(r0, r1), za);
    __m256i b = _mm256_adds_epi16(_mm256_packs_epi32(r2, r3), zb);
    __m256i c;
    if (how == 1) {   /* QT_LEAN_SIGNED: za, zb hold the zero point itself */
        c = _mm256_packs_epi16(a, b);
    } else {
        c = _mm256_packus_epi16(a, b);
        if (how == 2) c = _mm256_xor_si256(_mm256_min_epu8(c, cap), flip);   /* QT_LEAN_FULL */
    }
    qv_store_bytes(yk, y, c);
}

/* QV_W codes as int32. Sub-byte codes: the low `bits` bits, sign-extended when signed. */
static inline vi qv_load_codes(int dk, unsigned bits, int sgn, const void *x)
{
    __m256i c;
    if (dk == QK_D_B16) {
        __m128i h = _mm_loadu_si128((const __m128i *)x);
        return sgn ? _mm256_cvtepi16_epi32(h) : _mm256_cvtepu16_epi32(h);
    }
    if (dk == QK_D_B8) {
        __m128i b = _mm_loadl_epi64((const __m128i *)x);
        if (bits == 8) return sgn ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
        c = _mm256_and_si256(_mm256_cvtepu8_epi32(b), _mm256_set1_epi32((1 << bits) - 1));
    } else if (dk == QK_D_P4) {
        c = _mm256_cvtepu8_epi32(qx_unpack4(qx_load32(x)));
    } else {
        c = _mm256_cvtepu8_epi32(qx_unpack2(qx_load16(x)));
    }
    if (sgn) {   /* (c ^ h) - h sign-extends a bits-wide field */
        __m256i h = _mm256_set1_epi32(1 << (bits - 1));
        c = _mm256_sub_epi32(_mm256_xor_si256(c, h), h);
    }
    return c;
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

/* ---- float8 / float4 (x86_fp8.h); the same steps as convert.h ---- */

static inline vf qv_add_f(vf a, vf b) { return _mm256_add_ps(a, b); }

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

/* d where d is NaN, else p */
/* d with the quiet bit set in its NaN lanes (a signalling bfloat16 NaN widened by a shift) */
static inline vf qv_quiet_nan(vf d)
{
    vf q = _mm256_and_ps(_mm256_cmp_ps(d, d, _CMP_UNORD_Q),
                         _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000)));
    return _mm256_or_ps(d, q);
}

static inline vf qv_keep_nan(vf d, vf p)
{
    return _mm256_blendv_ps(p, d, _mm256_cmp_ps(d, d, _CMP_UNORD_Q));
}

/* 64 bytes from an L1 buffer to a cache line of y, bypassing the caches (x86_template.h) */
static inline void qv_stream64(void *y, const void *src)
{
    _mm256_stream_si256((__m256i *)y, _mm256_loadu_si256((const __m256i *)src));
    _mm256_stream_si256((__m256i *)y + 1, _mm256_loadu_si256((const __m256i *)src + 1));
}

/* float6 codes (x86_fp8.h), as avx512.c's qv_to_f6: t = min(|qm|, max) scaled by 2^(m - E),
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

/* q1 of the reciprocal form, or q0 = x * r where q1 is +-0 or NaN (x86_fp8.h) */
static inline vf qv_fix_recip(vf q1, vf q0)
{
    return _mm256_blendv_ps(q1, q0, _mm256_cmp_ps(q1, _mm256_setzero_ps(), _CMP_EQ_UQ));
}

/* Packed float6 (x86_fp8.h): 4 codes -> c0 | c1 << 6 | c2 << 12 | c3 << 18, whose three
 * low bytes are ONNX's group. maddubs pairs codes (c0 + 64 c1 < 2^12), madd pairs the pairs
 * (+ 4096 x), a byte shuffle keeps three bytes of each dword. */
static inline __m128i qv6_squeeze128(__m128i c)   /* 16 code bytes -> 12 bytes, low first */
{
    __m128i w = _mm_maddubs_epi16(c, _mm_set1_epi16(0x4001));
    __m128i d = _mm_madd_epi16(w, _mm_set1_epi32(0x10000001));
    return _mm_shuffle_epi8(d, _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1,
                                             -1));
}

/* QV_W codes (one per lane, < 64) -> 6 bytes */
static inline void qv_store6_1(unsigned char *y, vi r)
{
    __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    uint64_t v = (uint64_t)_mm_cvtsi128_si64(qv6_squeeze128(_mm_packus_epi16(w, w)));
    memcpy(y, &v, 6);   /* x86 is little-endian */
}

/* 4 QV_W codes (clean, < 64) -> 24 bytes, with the complement of bit 31 of s0..s3 added as
 * each code's sign (all ones: the codes have their signs): the signed packs keep the signs
 * of s at bit 7 of each byte, in the codes' order. full: 28 bytes are written (the last 4 are
 * junk that the next call overwrites). */
static inline void qv_store6_4(unsigned char *y, vi r0, vi r1, vi r2, vi r3, vi s0, vi s1,
                               vi s2, vi s3, int full)
{
    __m256i p = _mm256_packus_epi16(_mm256_packs_epi32(r0, r1), _mm256_packs_epi32(r2, r3));
    __m256i sg = _mm256_packs_epi16(_mm256_packs_epi32(s0, s1), _mm256_packs_epi32(s2, s3));
    p = _mm256_blendv_epi8(_mm256_or_si256(p, _mm256_set1_epi8(0x20)), p, sg);
    __m256i c = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm_storeu_si128((__m128i *)y, qv6_squeeze128(_mm256_castsi256_si128(c)));
    if (full) {
        _mm_storeu_si128((__m128i *)(y + 12), qv6_squeeze128(_mm256_extracti128_si256(c, 1)));
    } else {
        uint64_t hi[2];   /* the second 12 bytes follow the first 12 */
        _mm_storeu_si128((__m128i *)hi, qv6_squeeze128(_mm256_extracti128_si256(c, 1)));
        memcpy(y + 12, hi, 12);
    }
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

#include "x86_fp8.h"
#include "x86_quark.h"
#include "x86_template.h"

QT_TABLE(qk_avx2_table, "avx2");
