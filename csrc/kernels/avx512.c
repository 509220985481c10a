/* AVX-512 (F, BW, DQ, VL) kernels: the vector layer of the generic driver (generic/driver.h)
 * over 16 float32 lanes, narrowing with vpmovdb / vpmovdw.
 *
 * Built with -DQSIMD_TEST_SIMDE (C parity test only) it uses SIMDe's emulation instead of
 * the real instructions, so that it can be checked on a CPU without AVX-512; the table is
 * then renamed so that both builds can be linked into one test program. */
#if defined(QSIMD_TEST_SIMDE)
#include "simde_avx512.h"   /* tests/c: SIMDe plus the few intrinsics it lacks */
#define QK_AVX512_TABLE qk_avx512_simde_table
#else
#include <immintrin.h>
#include <string.h>
#define QK_AVX512_TABLE qk_avx512_table
#endif

#include "kernels.h"
#include "convert.h"
#include "x86_bytes.h"

#define QV_W 16
#define QV_ISA avx512
#define QV_FMA 1
#define QV_F16 1
#define QV_FP 1
#define QV_QUARK 1
#define QV_F6 1        /* qv_to_f6 / qv_f6_rec: float6 codes by the hardware's rounding */
#define QV_FP8_REC 1   /* float8 of float32 x by the reciprocal form and a table conversion */

typedef __m512 vf;
typedef __m512i vi;
typedef __m512d vd;   /* QV_W / 2 doubles (AMD Quark's 32-bit types, driver.h) */

static inline vf qv_set1(float f) { return _mm512_set1_ps(f); }
static inline vi qv_set1_i(int32_t v) { return _mm512_set1_epi32(v); }
static inline vd qv_set1_d(double v) { return _mm512_set1_pd(v); }
static inline vf qv_loadu_f(const float *p) { return _mm512_loadu_ps(p); }
static inline vi qv_loadu_i(const int32_t *p) { return _mm512_loadu_si512((const void *)p); }
static inline void qv_storeu_f(float *p, vf v) { _mm512_storeu_ps(p, v); }
static inline void qv_storeu_i(void *p, vi v) { _mm512_storeu_si512(p, v); }
static inline vf qv_add_f(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vd qv_add_d(vd a, vd b) { return _mm512_add_pd(a, b); }
static inline vf qv_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
#if (defined(__GNUC__) || defined(__clang__)) && defined(__AVX512F__)   /* (not under SIMDe) */
#define QV_OPAQUE 1   /* (generic/layout.h) */
static inline vf qv_opaque(vf v) { __asm__("" : "+v"(v)); return v; }
#endif
static inline vf qv_div(vf a, vf b) { return _mm512_div_ps(a, b); }
/* RN(1 / b) for |b| in [QK_RECIP_MIN, QK_RECIP_MAX] (generic/entries.h): rcp14's 14 bits, one
 * Newton step to within an ulp, and a last correction step whose rounding gives the correctly
 * rounded reciprocal (tests/c checks every significand), but for significands of all ones,
 * whose reciprocal lies just past a tie the last step sees as exact: those divide (a division
 * of every vector costs 2-3x as much). */
#define QV_RCP 1
static inline vf qv_rcp(vf b)
{
    vf one = _mm512_set1_ps(1.0f), y = _mm512_rcp14_ps(b);
    __m512i ones = _mm512_set1_epi32(0x7fffff);
    __mmask16 m = _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(b), ones), ones);
    y = _mm512_fmadd_ps(y, _mm512_fnmadd_ps(b, y, one), y);
    y = _mm512_fmadd_ps(y, _mm512_fnmadd_ps(b, y, one), y);
    return m ? _mm512_mask_div_ps(y, m, one, b) : y;
}
static inline vf qv_min(vf a, vf b) { return _mm512_min_ps(a, b); }   /* a < b ? a : b */
static inline vf qv_max(vf a, vf b) { return _mm512_max_ps(a, b); }   /* a > b ? a : b */
static inline vf qv_fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }    /* a*b+c */
static inline vf qv_fnmadd(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }  /* c-a*b */
static inline vi qv_add_i(vi a, vi b) { return _mm512_add_epi32(a, b); }
static inline vi qv_sub_i(vi a, vi b) { return _mm512_sub_epi32(a, b); }
static inline vi qv_or_i(vi a, vi b) { return _mm512_or_si512(a, b); }
static inline vi qv_and_i(vi a, vi b) { return _mm512_and_si512(a, b); }
static inline vi qv_xor_i(vi a, vi b) { return _mm512_xor_si512(a, b); }
static inline vf qv_cvt_i2f(vi a) { return _mm512_cvtepi32_ps(a); }

/* qv_blend: lanes [0, k) of a, the rest of b. qv_splice: the last k lanes of a, then the
 * first QV_W - k of b (0 < k < QV_W): one two-source permutation. */
static inline __mmask16 qv_below(unsigned k) { return (__mmask16)((1u << k) - 1u); }
static inline vi qv_blend_i(vi a, vi b, unsigned k) { return _mm512_mask_blend_epi32(qv_below(k), b, a); }
static inline vf qv_blend_f(vf a, vf b, unsigned k) { return _mm512_mask_blend_ps(qv_below(k), b, a); }
static inline __m512i qv_splice_idx(unsigned k)
{
    /* lane i: a's lane 16 - k + i (index below 16), else b's lane i - k (16 + i - k) */
    return _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                            _mm512_set1_epi32(16 - (int)k));
}
static inline vi qv_splice_i(vi a, vi b, unsigned k) { return _mm512_permutex2var_epi32(a, qv_splice_idx(k), b); }
static inline vf qv_splice_f(vf a, vf b, unsigned k) { return _mm512_permutex2var_ps(a, qv_splice_idx(k), b); }
/* lane i = lane idx[i] of v (0 <= idx[i] < QV_W) */
static inline vf qv_perm_f(vf v, vi idx) { return _mm512_permutexvar_ps(idx, v); }
static inline vi qv_perm_i(vi v, vi idx) { return _mm512_permutexvar_epi32(idx, v); }

static inline vf qv_load_x(int xk, const void *x)
{
    switch (xk) {
    case QK_X_F32: return _mm512_loadu_ps((const float *)x);
    case QK_X_F16: return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)x));   /* exact */
    case QK_X_BF16:   /* bfloat16 is the high half of a float32 */
        return _mm512_castsi512_ps(_mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)x)), 16));
    default: return _mm512_cvtepi32_ps(_mm512_loadu_si512(x));
    }
}

/* float16 round trip, nearest-even: the value qk_round_f16 gives (NaN stays NaN). */
static inline vf qv_round_f16(vf v)
{
    return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

/* bfloat16 round to nearest even, as qk_round_bf16; NaN stays NaN (the carry of the
 * rounding could turn a NaN into inf or wrap its sign). */
static inline vf qv_round_bf16(vf v)
{
    __m512i u = _mm512_castps_si512(v);
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
    r = _mm512_and_si512(r, _mm512_set1_epi32((int32_t)0xffff0000u));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_castsi512_ps(r), v);
}

/* The quotient's bounds and conversions, as avx2.c's. */
static inline vf qv_bound_x(vf n, vf xl) { return _mm512_min_ps(xl, n); }
static inline vi qv_cvt_a(vf q, int mayinf)
{
    return _mm512_cvtps_epi32(mayinf ? _mm512_min_ps(_mm512_set1_ps(131072.0f), q) : q);
}
static inline vi qv_cvt_raw(vf q) { return qv_cvt_a(q, 1); }
static inline vd qv_clamp_rint_d(vd d, vd lo, vd hi)   /* as avx2.c's */
{
    return _mm512_roundscale_pd(_mm512_min_pd(_mm512_max_pd(d, lo), hi),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/* Integer stores of 4 QV_W raw codes with zero points, as avx2.c's. */
typedef struct qv_qc {
    __m512i qmin16, cap, flip, lo, hi;
    int how;   /* 0: full uint8 range, 1: full int8 range, 2: general */
} qv_qc;

static inline qv_qc qv_qc_init(int32_t qmin, int32_t qmax, uint32_t mask)
{
    qv_qc c;
    c.qmin16 = _mm512_set1_epi16((short)qmin);
    c.cap = _mm512_set1_epi8((char)(qmax - qmin));
    c.flip = _mm512_set1_epi8((char)((uint32_t)-qmin & mask));
    c.lo = _mm512_set1_epi32(qmin);
    c.hi = _mm512_set1_epi32(qmax);
    c.how = qmax - qmin != 255 ? 2 : qmin ? 1 : 0;
    return c;
}

static inline void qv_qstore4(int yk, void *y, const vi c[4], const vi z[4], const qv_qc *k)
{
    if (yk == QK_Y_B16) {
        QD_UNROLL
        for (int v = 0; v < 4; v++) {
            __m512i t = _mm512_max_epi32(c[v], _mm512_sub_epi32(k->lo, z[v]));
            t = _mm512_add_epi32(_mm512_min_epi32(t, _mm512_sub_epi32(k->hi, z[v])), z[v]);
            _mm256_storeu_si256((__m256i *)y + v, _mm512_cvtepi32_epi16(t));
        }
        return;
    }
    __m512i za = _mm512_packs_epi32(z[0], z[1]), zb = _mm512_packs_epi32(z[2], z[3]);
    if (k->how != 1) {
        za = _mm512_sub_epi16(za, k->qmin16);
        zb = _mm512_sub_epi16(zb, k->qmin16);
    }
    __m512i a = _mm512_adds_epi16(_mm512_packs_epi32(c[0], c[1]), za);
    __m512i b = _mm512_adds_epi16(_mm512_packs_epi32(c[2], c[3]), zb);
    __m512i p;
    if (k->how == 1) {
        p = _mm512_packs_epi16(a, b);
    } else {
        p = _mm512_packus_epi16(a, b);
        if (k->how == 2) p = _mm512_xor_si512(_mm512_min_epu8(p, k->cap), k->flip);
    }
    /* 128-bit lane k holds c0..c3's elements 4k..4k+3 as dwords: gather each c's four */
    __m512i o = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), p);
    if (yk == QK_Y_B8) {
        _mm512_storeu_si512(y, o);
    } else if (yk == QK_Y_P4) {   /* c0 + 16 c1 per byte pair, then one byte per word */
        __m512i w = _mm512_maddubs_epi16(o, _mm512_set1_epi16(0x1001));
        _mm256_storeu_si256((__m256i *)y, _mm512_cvtepi16_epi8(w));
    } else {                      /* (c0 + 4 c1) + 16 (c2 + 4 c3) per four bytes */
        __m512i w = _mm512_maddubs_epi16(o, _mm512_set1_epi16(0x0401));
        __m512i d = _mm512_madd_epi16(w, _mm512_set1_epi32(0x00100001));
        _mm_storeu_si128((__m128i *)y, _mm512_cvtepi32_epi8(d));
    }
}

/* QV_W codes as int32: the low `bits` bits; signed 8- and 16-bit codes when sgn is 1; sgn 2:
 * sign-extended from bit `bits - 1` by h (that bit). */
static inline vi qv_load_codes(int dk, unsigned bits, int sgn, vi h, const void *x)
{
    __m512i c;
    if (dk == QK_D_B16) {
        __m256i w = _mm256_loadu_si256((const __m256i *)x);
        if (sgn == 1) return _mm512_cvtepi16_epi32(w);
        c = _mm512_cvtepu16_epi32(w);
    } else if (dk == QK_D_B8) {
        __m128i b = _mm_loadu_si128((const __m128i *)x);
        if (sgn == 1) return _mm512_cvtepi8_epi32(b);
        c = _mm512_cvtepu8_epi32(b);
        if (bits < 8) c = _mm512_and_si512(c, _mm512_set1_epi32((1 << bits) - 1));
    } else if (dk == QK_D_P4) {
        c = _mm512_cvtepu8_epi32(qx_unpack4(_mm_loadl_epi64((const __m128i *)x)));
    } else {
        c = _mm512_cvtepu8_epi32(qx_unpack2(qx_load32(x)));
    }
    return sgn == 2 ? _mm512_sub_epi32(_mm512_xor_si512(c, h), h) : c;   /* sign-extends a field, h its top bit */
}

/* bfloat16 bits (in the low half of each lane) of v, as qk_f32_to_bf16. */
static inline vi qv_bf16_bits(vf v)
{
    __m512i u = _mm512_castps_si512(v);
    __m512i hi = _mm512_srli_epi32(u, 16);
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_and_si512(hi, _mm512_set1_epi32(1)),
                                                     _mm512_set1_epi32(0x7fff)));
    r = _mm512_srli_epi32(r, 16);
    __m512i nan = _mm512_or_si512(_mm512_and_si512(hi, _mm512_set1_epi32(0x8000)),
                                  _mm512_set1_epi32(0x7fc0));
    return _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), r, nan);
}

static inline void qv_store_out(int ok, void *y, vf v)
{
    if (ok == QK_O_F32)
        _mm512_storeu_ps((float *)y, v);
    else if (ok == QK_O_F16)
        _mm256_storeu_si256((__m256i *)y, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    else
        _mm256_storeu_si256((__m256i *)y, _mm512_cvtepi32_epi16(qv_bf16_bits(v)));
}

/* ---- float8 / float4 / float6 ---- */

/* float8 e4m3fn / e5m2 codes by the float6 method (qv_f6_rec): t = |q| clamped to the
 * largest value the overflow rule keeps (saturating: the largest finite; otherwise the first
 * value past it, whose code is NaN for e4m3fn (480) or inf for e5m2 (2^16)), then
 * w = t + C with C = 2^(E - m + 23) + ((E - emin) << m) ulps, E = max(exponent of t, emin),
 * from a table indexed by t's biased exponent: C's ulp is the float8 quantum of t's binade, so
 * the add's one rounding is the nearest-even rounding to float8 and w's low bits are the code
 * (a carry into the next binade lands on its code; t below 2^emin rounds in the subnormal
 * quantum). A NaN q gives the NaN code; the sign is q's, as qv_to_fp's. */
#define QV8_E(i, lo, mask, emin) ((emin) + (((i) - (lo)) & (mask)))
#define QV8_C(i, lo, mask, m, emin) \
    (((QV8_E(i, lo, mask, emin) - (m) + 150) << 23) + ((QV8_E(i, lo, mask, emin) - (emin)) << (m)))
#define QV8_4(i, ...) QV8_C(i, __VA_ARGS__), QV8_C(i + 1, __VA_ARGS__), QV8_C(i + 2, __VA_ARGS__), \
    QV8_C(i + 3, __VA_ARGS__)
#define QV8_16(i, ...) QV8_4(i, __VA_ARGS__), QV8_4(i + 4, __VA_ARGS__), QV8_4(i + 8, __VA_ARGS__), \
    QV8_4(i + 12, __VA_ARGS__)
/* index = biased exponent & 15 (e4m3fn: 121 .. 135) or & 31 (e5m2: 113 .. 143) */
static const int32_t qv8_c4[16] = {QV8_16(0, 121, 15, 3, -6)};
static const int32_t qv8_c5[32] = {QV8_16(0, 113, 31, 2, -14), QV8_16(16, 113, 31, 2, -14)};
static inline vi qv_to_fp8(vf q, int fmt, int sat)
{
    const int e5 = fmt == QK_FP_E5M2;
    const float top = e5 ? (sat ? 57344.0f : 65536.0f) : (sat ? 448.0f : 480.0f);
    __m512 t = _mm512_range_ps(q, _mm512_set1_ps(top), 0x0a);   /* min of magnitudes, +sign */
    __m512i ix = _mm512_max_epi32(_mm512_srli_epi32(_mm512_castps_si512(t), 23),
                                  _mm512_set1_epi32(e5 ? 113 : 121));
    __m512i c = e5 ? _mm512_permutex2var_epi32(_mm512_loadu_si512((const void *)qv8_c5), ix,
                                               _mm512_loadu_si512((const void *)(qv8_c5 + 16)))
                   : _mm512_permutexvar_epi32(ix, _mm512_loadu_si512((const void *)qv8_c4));
    __m512i w = _mm512_castps_si512(_mm512_add_ps(t, _mm512_castsi512_ps(c)));
    w = _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q), w,
                                _mm512_set1_epi32(e5 ? 0x7e : 0x7f));
    /* (w & 0x7f) | (q >> 24 & 0x80): A & C | B & ~C */
    return _mm512_ternarylogic_epi32(w, _mm512_srli_epi32(_mm512_castps_si512(q), 24),
                                     _mm512_set1_epi32(0x7f), 0xe4);
}

static inline vi qv_to_fp(vf q, int fmt, int sat)
{
    if (fmt == QK_FP_E4M3FN || fmt == QK_FP_E5M2) return qv_to_fp8(q, fmt, sat);
    const int m = (int)qk_fp_man(fmt), bias = qk_fp_bias(fmt);
    const int32_t maxc = (int32_t)qk_fp_maxcode(fmt);
    __m512i u = _mm512_castps_si512(q);
    __m512i a = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
    __m512i sign = _mm512_and_si512(u, _mm512_set1_epi32((int32_t)0x80000000u));
    __m512i down = _mm512_set1_epi32(23 - m);
    __m512i r = _mm512_sub_epi32(a, _mm512_set1_epi32((127 - bias) << 23));
    __m512i odd = _mm512_and_si512(_mm512_srlv_epi32(r, down), _mm512_set1_epi32(1));
    r = _mm512_add_epi32(r, _mm512_add_epi32(_mm512_set1_epi32((1 << (22 - m)) - 1), odd));
    __m512i cn = _mm512_srlv_epi32(r, down);
    __m512 magic = _mm512_castsi512_ps(_mm512_set1_epi32((127 + 24 - bias - m) << 23));
    __m512i cs = _mm512_sub_epi32(
        _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(a), magic)),
        _mm512_castps_si512(magic));
    __m512i c = _mm512_mask_blend_epi32(
        _mm512_cmpgt_epi32_mask(_mm512_set1_epi32((128 - bias) << 23), a), cn, cs);
    __mmask16 nan = _mm512_cmpgt_epi32_mask(a, _mm512_set1_epi32(0x7f800000));
    if (sat || qk_fp_finite(fmt))
        c = _mm512_min_epi32(c, _mm512_set1_epi32(maxc));
    else
        c = _mm512_mask_blend_epi32(_mm512_cmpgt_epi32_mask(c, _mm512_set1_epi32(maxc)), c,
                                    _mm512_set1_epi32(fmt == QK_FP_E5M2 ? 0x7c : 0x7f));
    if (qk_fp_finite(fmt)) {   /* float4 / float6, no NaN: the zero of the opposite sign */
        c = _mm512_mask_blend_epi32(nan, c, _mm512_setzero_si512());
        sign = _mm512_mask_xor_epi32(sign, nan, sign, _mm512_set1_epi32((int32_t)0x80000000u));
        return _mm512_or_si512(c, _mm512_srli_epi32(sign, fmt == QK_FP_E2M1 ? 28 : 26));
    }
    c = _mm512_mask_blend_epi32(nan, c, _mm512_set1_epi32(fmt == QK_FP_E5M2 ? 0x7e : 0x7f));
    return _mm512_or_si512(c, _mm512_srli_epi32(sign, 24));
}

static inline vf qv_from_fp(vi c, int fmt)
{
    const int m = (int)qk_fp_man(fmt), bias = qk_fp_bias(fmt);
    const int32_t sbit = (int32_t)qk_fp_sbit(fmt);
    if (qk_fp_finite(fmt)) c = _mm512_and_si512(c, _mm512_set1_epi32(2 * sbit - 1));
    __m512i mag = _mm512_and_si512(c, _mm512_set1_epi32(sbit - 1));
    __m512i sign = _mm512_and_si512(c, _mm512_set1_epi32(sbit));
    sign = _mm512_slli_epi32(sign, fmt == QK_FP_E2M1 ? 28 : qk_fp_finite(fmt) ? 26 : 24);
    __m512i normal = _mm512_add_epi32(_mm512_sllv_epi32(mag, _mm512_set1_epi32(23 - m)),
                                      _mm512_set1_epi32((127 - bias) << 23));
    __m512 unit = _mm512_castsi512_ps(_mm512_set1_epi32((127 + 1 - bias - m) << 23));
    __m512 sub = _mm512_mul_ps(
        _mm512_cvtepi32_ps(_mm512_and_si512(mag, _mm512_set1_epi32((1 << m) - 1))), unit);
    __m512i r = _mm512_mask_blend_epi32(
        _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(1 << m), mag), normal,
        _mm512_castps_si512(sub));
    if (fmt == QK_FP_E4M3FN)
        r = _mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask(mag, _mm512_set1_epi32(0x7f)), r,
                                    _mm512_set1_epi32(0x7fc00000));
    else if (fmt == QK_FP_E5M2)
        r = _mm512_mask_blend_epi32(
            _mm512_cmpgt_epi32_mask(mag, _mm512_set1_epi32(0x7b)), r,
            _mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask(mag, _mm512_set1_epi32(0x7c)),
                                    _mm512_set1_epi32(0x7fc00000),
                                    _mm512_set1_epi32(0x7f800000)));
    return _mm512_castsi512_ps(_mm512_or_si512(r, sign));
}

static inline vf qv_keep_nan(vf d, vf p)
{
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(d, d, _CMP_UNORD_Q), p, d);
}

/* 64 bytes from an L1 buffer to a cache line of y, bypassing the caches (driver.h's
 * streamed runs) */
static inline void qv_stream64(void *y, const void *src)
{
#if defined(QSIMD_TEST_SIMDE)   /* SIMDe has no 512-bit streaming store: two native halves */
    _mm256_stream_si256((__m256i *)y, _mm256_loadu_si256((const __m256i *)src));
    _mm256_stream_si256((__m256i *)y + 1, _mm256_loadu_si256((const __m256i *)src + 1));
#else
    _mm512_stream_si512((__m512i *)y, _mm512_loadu_si512(src));
#endif
}

/* float6 codes (driver.h): |qm| rounded to float6 with the hardware's round-to-nearest-even
 * instead of integer steps. t = min(|qm|, max) saturates (inf, huge and NaN give max); each
 * lane is scaled by 2^(m - E), E = max(exponent of t, emin), a power of two and so exact,
 * which makes the float6 quantum of t's binade the unit; the rounded integer k plus
 * (E - emin) << m is the code (a carry of k into the next binade lands on its code). The
 * sign comes from qs (the quotient's sign, also for +-0), NaN qs gives the zero of the
 * opposite sign. */
static inline vi qv_to_f6(vf qm, vf qs, int fmt)
{
    const int m = (int)qk_fp_man(fmt), emin = 1 - qk_fp_bias(fmt);
    const float top = fmt == QK_FP_E2M3 ? 7.5f : 28.0f;
    const __m512i ebits = _mm512_set1_epi32((127 + emin) << 23);
    __m512 t = _mm512_min_ps(_mm512_abs_ps(qm), _mm512_set1_ps(top));   /* NaN -> top */
    __m512i ec = _mm512_max_epi32(_mm512_and_si512(_mm512_castps_si512(t),
                                                   _mm512_set1_epi32(0x7f800000)), ebits);
    __m512i top_e = _mm512_set1_epi32(qv_bits_i32((254u + (unsigned)m) << 23));
    __m512 f = _mm512_castsi512_ps(_mm512_sub_epi32(top_e, ec));
    __m512i k = _mm512_cvtps_epi32(_mm512_mul_ps(t, f));   /* MXCSR: nearest-even, as qv_cvt */
    __m512i c = _mm512_add_epi32(k, _mm512_srli_epi32(_mm512_sub_epi32(ec, ebits), 23 - m));
    __m512i sg = _mm512_srli_epi32(_mm512_castps_si512(qs), 26);   /* sign at 0x20 */
    c = _mm512_ternarylogic_epi32(c, sg, _mm512_set1_epi32(0x20), 0xf8);   /* c | (sg & 0x20) */
    return _mm512_mask_ternarylogic_epi32(c, _mm512_cmp_ps_mask(qs, qs, _CMP_UNORD_Q), sg,
                                          _mm512_set1_epi32(0x20), 0x22);   /* ~sg & 0x20 */
}

/* float6 codes of x / s by the exact reciprocal form (driver.h), rn = -1/s: the negated
 * q0n = x rn, en = x + q0n s (exact) and q1n = q0n + en rn (-q1, as RN is symmetric) cost what
 * the plain form does and give the sign rule without a NaN test: the code's sign bit is the
 * complement of q0n's sign, both for numbers (q0n has the quotient's opposite sign, also for
 * zeros) and for NaN (x's NaN, whose code is the zero of the opposite sign).
 *   t = min(|q1n|, max) after one fixup by q0n: NaN (x NaN) -> +0, +-inf (x infinite or x r
 *       overflowing) -> +inf, which saturates; then t = max(t, 2^-8), which rounds to code 0
 *       as every t below it does, so t's exponent is one of 16 (-8 .. 7);
 *   C = 2^(E - m + 23) + A ulps, E = max(exponent of t, emin), A = (E - emin) << m, from a
 *       16-entry table indexed by the low 4 bits of t's biased exponent: C's ulp is the
 *       float6 quantum of t's binade;
 *   w = t + C, rounded once: w is C plus t's quantum count rounded to nearest even (A and 32
 *       are even, the parity is the count's), so its low bits are the code; a carry into the
 *       next binade lands on its code.
 * Returns w's bits: the code in the low 6 bits, bits 6-15 zero, so truncating narrowing (and
 * qv_store6_4's word picking) see the code. Without q0 the complement of q0n's sign is added
 * to C at bit 5; with q0 (the packed path) it is left out and *q0 gets q0n's bits, whose
 * signs qv_store6_4 adds to 64 codes at once. */
#define QV6_E(i, emin) ((((i) + 9) & 15) - 8 < (emin) ? (emin) : (((i) + 9) & 15) - 8)
#define QV6_C(i, m, emin) (((QV6_E(i, emin) - (m) + 150) << 23) + ((QV6_E(i, emin) - (emin)) << (m)))
#define QV6_16(M, m, emin) M(0, m, emin), M(1, m, emin), M(2, m, emin), M(3, m, emin), \
    M(4, m, emin), M(5, m, emin), M(6, m, emin), M(7, m, emin), M(8, m, emin), M(9, m, emin), \
    M(10, m, emin), M(11, m, emin), M(12, m, emin), M(13, m, emin), M(14, m, emin), M(15, m, emin)
static const int32_t qv6_c[2][16] = {{QV6_16(QV6_C, 3, 0)}, {QV6_16(QV6_C, 2, -2)}};
static inline vi qv_f6_rec(vf x, vf s, vf rn, int fmt, vi *q0)
{
    const float top = fmt == QK_FP_E2M3 ? 7.5f : 28.0f;
    __m512 q0n = _mm512_mul_ps(x, rn);
    __m512 q1n = _mm512_fmadd_ps(_mm512_fmadd_ps(q0n, s, x), rn, q0n);
    /* fixup table by q0n's class: QNaN, SNaN -> +0 (8); -inf, +inf -> +inf (5); others keep */
    __m512 t = _mm512_fixupimm_ps(q1n, q0n, _mm512_set1_epi32(0x00550088), 0);
    t = _mm512_range_ps(t, _mm512_set1_ps(top), 0x0a);   /* min of magnitudes, sign cleared */
    t = _mm512_range_ps(t, _mm512_set1_ps(0x1p-8f), 0x0b);   /* max of magnitudes */
    __m512i ix = _mm512_srli_epi32(_mm512_castps_si512(t), 23);
    __m512i c = _mm512_permutexvar_epi32(
        ix, _mm512_loadu_si512((const void *)qv6_c[fmt == QK_FP_E2M3 ? 0 : 1]));
    if (q0) {
        *q0 = _mm512_castps_si512(q0n);
    } else {   /* C | (~q0n >> 26 & 0x20): A | (~B & C) */
        c = _mm512_ternarylogic_epi32(c, _mm512_srli_epi32(_mm512_castps_si512(q0n), 26),
                                      _mm512_set1_epi32(0x20), 0xf2);
    }
    __m512i w = _mm512_castps_si512(_mm512_add_ps(t, _mm512_castsi512_ps(c)));
    return q0 ? w : _mm512_and_si512(w, _mm512_set1_epi32(0x3f));   /* clean codes */
}

/* 4 QV_W float6 codes (low 6 bits of each lane's low word: clean codes or qv_f6_rec's) -> 48
 * bytes, with the complement of bit 31 of s0..s3 added as each code's sign (all ones: the
 * codes have their signs). Two word permutations keep the codes' low words (no saturation of
 * qv_f6_rec's high bits) and two the high words of s (bit 15 their sign), which the packs
 * turn into bytes alike: lane k of 128 bits holds codes 8k..8k+7 and 32+8k..32+8k+7. Each
 * dword's 4 codes become 24 bits (maddubs, madd), a byte shuffle keeps each lane's 12 bytes,
 * two runs of 6 = 3 words, and a word permutation puts the runs in order: 48 bytes, stored
 * as 32 + 16. */
static inline void qv_store6_4(unsigned char *y, const vi r[4], const vi s[4])
{
    vi r0 = r[0], r1 = r[1], r2 = r[2], r3 = r[3], s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
    const __m512i lo = _mm512_set_epi16(62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36,
                                        34, 32, 30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8,
                                        6, 4, 2, 0);
    const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(1));
    __m512i c = _mm512_packus_epi16(_mm512_permutex2var_epi16(r0, lo, r1),
                                    _mm512_permutex2var_epi16(r2, lo, r3));
    __m512i sg = _mm512_packs_epi16(_mm512_permutex2var_epi16(s0, hi, s1),
                                    _mm512_permutex2var_epi16(s2, hi, s3));   /* sign: bit 7 */
    /* c | (~(sg >> 2) & 0x20): A | (~B & C); the word shift moves each byte's bit 7 to 5 */
    c = _mm512_ternarylogic_epi32(c, _mm512_srli_epi16(sg, 2), _mm512_set1_epi8(0x20), 0xf2);
    __m512i w = _mm512_maddubs_epi16(c, _mm512_set1_epi16(0x4001));
    __m512i d = _mm512_madd_epi16(w, _mm512_set1_epi32(0x10000001));
    /* per 128-bit lane: bytes 0-2, 4-6, 8-10, 12-14 to the lane's first 12 */
    const int32_t d0 = 0x04020100, d1 = 0x09080605, d2 = 0x0e0d0c0a, d3 = -1;
    __m512i g = _mm512_shuffle_epi8(d, _mm512_set_epi32(d3, d2, d1, d0, d3, d2, d1, d0, d3, d2,
                                                        d1, d0, d3, d2, d1, d0));
    /* lane k: words 0-2 hold groups 2k, 2k+1, words 3-5 groups 8+2k, 9+2k */
    g = _mm512_permutexvar_epi16(_mm512_set_epi16(31, 30, 29, 28, 27, 23, 15, 7, 29, 28, 27, 21,
                                                  20, 19, 13, 12, 11, 5, 4, 3, 26, 25, 24, 18,
                                                  17, 16, 10, 9, 8, 2, 1, 0), g);
    _mm256_storeu_si256((__m256i *)y, _mm512_castsi512_si256(g));
    _mm_storeu_si128((__m128i *)(y + 32), _mm256_castsi256_si128(_mm512_extracti64x4_epi64(g, 1)));
}

/* q1 of the reciprocal form, or q0 = x * r where q1 is +-0 or NaN (driver.h) */
static inline vf qv_fix_recip(vf q1, vf q0)
{
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(q1, _mm512_setzero_ps(), _CMP_EQ_UQ), q1, q0);
}

/* 12 bytes -> QV_W codes: 128-bit lane k takes group k, lane i bits 6(i%4) .. of it */
static inline vi qv_load6(const unsigned char *x)
{
    uint64_t lo;
    uint32_t hi;
    memcpy(&lo, x, 8);
    memcpy(&hi, x + 8, 4);
    __m128i b = _mm_insert_epi32(_mm_cvtsi64_si128((long long)lo), (int)hi, 2);
    /* dword control: bytes 3k, 3k+1, 3k+2 of the group, then a zero byte (0x80) */
    const int32_t k0 = (int32_t)0x80020100u, k1 = (int32_t)0x80050403u;
    const int32_t k2 = (int32_t)0x80080706u, k3 = (int32_t)0x800b0a09u;
    __m512i g = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(b),
                                    _mm512_set_epi32(k3, k3, k3, k3, k2, k2, k2, k2, k1, k1, k1,
                                                     k1, k0, k0, k0, k0));
    g = _mm512_srlv_epi32(g, _mm512_setr_epi32(0, 6, 12, 18, 0, 6, 12, 18, 0, 6, 12, 18, 0, 6,
                                               12, 18));
    return _mm512_and_si512(g, _mm512_set1_epi32(0x3f));
}

/* AMD Quark's 32-bit types: the halves of a vector as double, as avx2.c's */
static inline vd qv_f2d(vf v, int h)
{
    return _mm512_cvtps_pd(h ? _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))
                             : _mm512_castps512_ps256(v));
}
static inline vd qv_i2d(vi v, int h)
{
    return _mm512_cvtepi32_pd(h ? _mm512_extracti64x4_epi64(v, 1) : _mm512_castsi512_si256(v));
}
static inline vf qv_d2f(vd a, vd b)
{
    __m512d lo = _mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(a)));
    return _mm512_castpd_ps(_mm512_insertf64x4(lo, _mm256_castps_pd(_mm512_cvtpd_ps(b)), 1));
}
static inline vi qv_d2i(vd a, vd b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtpd_epi32(a)),
                              _mm512_cvtpd_epi32(b), 1);
}

#include "generic/driver.h"
#include "generic/minmax.h"
#include "generic/entries.h"

#define QK_ENTRY_avx512(kind, ...) QD_##kind##FN(__VA_ARGS__)
#include "generic/registry.def"
#undef QK_ENTRY_avx512
#define QK_ENTRY_avx512(kind, ...) QD_##kind##SET(__VA_ARGS__)
#if !defined(QSIMD_NO_AVX2)
extern const qk_table qk_avx2_table;
#endif
const qk_table QK_AVX512_TABLE = {
    .name = "avx512",
#if !defined(QSIMD_NO_AVX2)
    .base = &qk_avx2_table,   /* the entries registry.def does not list for AVX-512 */
#endif
#include "generic/registry.def"
    .minmax_f32 = QD_N(minmax),
    .recip_f32 = QD_N(recip),
    .widen_zp = QD_N(widen),
    .minmax_cols = QD_N(minmax_cols),
    .minmax_groups = QD_N(minmax_groups),
};
