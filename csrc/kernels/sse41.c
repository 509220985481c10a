/* SSE4.1 kernels: the vector layer of the generic driver (generic/driver.h) over 4 float32
 * lanes. No FMA at this level (the quotient divides: an exact residual without it would cost
 * more than divps) and no F16C (float16 entries stay with the scalar table); bfloat16 is done
 * with integer operations. Only the integer rows are listed (registry.def): float8 / float4
 * and AMD Quark's types are rare on CPUs without AVX2. */
#include <immintrin.h>

#include "kernels.h"
#include "x86_bytes.h"

#define QV_W 4
#define QV_ISA sse41
#define QV_FMA 0
#define QV_F16 0
#define QV_FP 0
#define QV_QUARK 0

typedef __m128 vf;
typedef __m128i vi;

QK_ALWAYS_INLINE vf qv_set1(float f) { return _mm_set1_ps(f); }
QK_ALWAYS_INLINE vi qv_set1_i(int32_t v) { return _mm_set1_epi32(v); }
QK_ALWAYS_INLINE vf qv_loadu_f(const float *p) { return _mm_loadu_ps(p); }
QK_ALWAYS_INLINE vi qv_loadu_i(const int32_t *p) { return _mm_loadu_si128((const __m128i *)p); }
QK_ALWAYS_INLINE void qv_storeu_f(float *p, vf v) { _mm_storeu_ps(p, v); }
QK_ALWAYS_INLINE void qv_storeu_i(void *p, vi v) { _mm_storeu_si128((__m128i *)p, v); }
QK_ALWAYS_INLINE vf qv_mul(vf a, vf b) { return _mm_mul_ps(a, b); }
QK_ALWAYS_INLINE vf qv_div(vf a, vf b) { return _mm_div_ps(a, b); }
QK_ALWAYS_INLINE vf qv_min(vf a, vf b) { return _mm_min_ps(a, b); }   /* a < b ? a : b */
QK_ALWAYS_INLINE vf qv_max(vf a, vf b) { return _mm_max_ps(a, b); }   /* a > b ? a : b */
QK_ALWAYS_INLINE vi qv_add_i(vi a, vi b) { return _mm_add_epi32(a, b); }
QK_ALWAYS_INLINE vi qv_sub_i(vi a, vi b) { return _mm_sub_epi32(a, b); }
QK_ALWAYS_INLINE vi qv_or_i(vi a, vi b) { return _mm_or_si128(a, b); }
QK_ALWAYS_INLINE vi qv_and_i(vi a, vi b) { return _mm_and_si128(a, b); }
QK_ALWAYS_INLINE vf qv_cvt_i2f(vi a) { return _mm_cvtepi32_ps(a); }

/* qv_blend: lanes [0, k) of a, the rest of b. qv_splice: the last k lanes of a, then the
 * first QV_W - k of b (0 < k < QV_W), as palignr with a run-time count. */
QK_ALWAYS_INLINE __m128i qv_lanes_below(unsigned k)
{
    return _mm_cmpgt_epi32(_mm_set1_epi32((int)k), _mm_setr_epi32(0, 1, 2, 3));
}
QK_ALWAYS_INLINE vi qv_blend_i(vi a, vi b, unsigned k) { return _mm_blendv_epi8(b, a, qv_lanes_below(k)); }
QK_ALWAYS_INLINE vf qv_blend_f(vf a, vf b, unsigned k)
{
    return _mm_blendv_ps(b, a, _mm_castsi128_ps(qv_lanes_below(k)));
}
QK_ALWAYS_INLINE vi qv_splice_i(vi a, vi b, unsigned k)
{
    /* byte i of the result: byte (i - 4k) mod 16 of a, then of b */
    __m128i idx = _mm_and_si128(_mm_sub_epi8(_mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                                           12, 13, 14, 15),
                                             _mm_set1_epi8((char)(4 * k))), _mm_set1_epi8(15));
    return qv_blend_i(_mm_shuffle_epi8(a, idx), _mm_shuffle_epi8(b, idx), k);
}
QK_ALWAYS_INLINE vf qv_splice_f(vf a, vf b, unsigned k)
{
    return _mm_castsi128_ps(qv_splice_i(_mm_castps_si128(a), _mm_castps_si128(b), k));
}
/* lane i = lane idx[i] of v (0 <= idx[i] < QV_W): the bytes of dword idx[i] */
QK_ALWAYS_INLINE vi qv_perm_i(vi v, vi idx)
{
    __m128i b = _mm_shuffle_epi8(_mm_slli_epi32(idx, 2),
                                 _mm_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12));
    return _mm_shuffle_epi8(v, _mm_add_epi8(b, _mm_set1_epi32(0x03020100)));
}
QK_ALWAYS_INLINE vf qv_perm_f(vf v, vi idx)
{
    return _mm_castsi128_ps(qv_perm_i(_mm_castps_si128(v), idx));
}

QK_ALWAYS_INLINE vf qv_load_x(int xk, const void *x)
{
    switch (xk) {
    case QK_X_F32: return _mm_loadu_ps((const float *)x);
    case QK_X_BF16:   /* bfloat16 is the high half of a float32 */
        return _mm_castsi128_ps(
            _mm_slli_epi32(_mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i *)x)), 16));
    default: return _mm_cvtepi32_ps(_mm_loadu_si128((const __m128i *)x));
    }
}

/* bfloat16 round to nearest even, as qk_round_bf16; NaN stays NaN (the carry of the
 * rounding could turn a NaN into inf or wrap its sign). */
QK_ALWAYS_INLINE vf qv_round_bf16(vf v)
{
    __m128i u = _mm_castps_si128(v);
    __m128i odd = _mm_and_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(1));
    __m128i r = _mm_add_epi32(u, _mm_add_epi32(odd, _mm_set1_epi32(0x7fff)));
    r = _mm_and_si128(r, _mm_set1_epi32((int32_t)0xffff0000u));
    return _mm_blendv_ps(_mm_castsi128_ps(r), v, _mm_cmpunord_ps(v, v));
}

/* The true quotient to int32: NaN and everything below int32 give INT_MIN, a quotient
 * above 2^17 is first bounded there (min keeps NaN as its second operand). */
QK_ALWAYS_INLINE vi qv_cvt_raw(vf q) { return _mm_cvtps_epi32(_mm_min_ps(_mm_set1_ps(131072.0f), q)); }

/* Integer stores of 4 QV_W raw codes with zero points, as avx2.c's. */
typedef struct qv_qc {
    __m128i qmin16, cap, flip, lo, hi;
} qv_qc;

QK_ALWAYS_INLINE qv_qc qv_qc_init(int32_t qmin, int32_t qmax, uint32_t mask)
{
    qv_qc c;
    c.qmin16 = _mm_set1_epi16((short)qmin);
    c.cap = _mm_set1_epi8((char)(qmax - qmin));
    c.flip = _mm_set1_epi8((char)((uint32_t)-qmin & mask));
    c.lo = _mm_set1_epi32(qmin);
    c.hi = _mm_set1_epi32(qmax);
    return c;
}

QK_ALWAYS_INLINE void qv_qstore4(int yk, void *y, const vi c[4], const vi z[4], const qv_qc *k)
{
    if (yk == QK_Y_B16) {
        __m128i r[4], ff = _mm_set1_epi32(0xffff);
        for (int v = 0; v < 4; v++) {
            __m128i t = _mm_max_epi32(c[v], _mm_sub_epi32(k->lo, z[v]));
            r[v] = _mm_and_si128(_mm_add_epi32(_mm_min_epi32(t, _mm_sub_epi32(k->hi, z[v])), z[v]), ff);
        }
        _mm_storeu_si128((__m128i *)y, _mm_packus_epi32(r[0], r[1]));
        _mm_storeu_si128((__m128i *)y + 1, _mm_packus_epi32(r[2], r[3]));
        return;
    }
    __m128i za = _mm_sub_epi16(_mm_packs_epi32(z[0], z[1]), k->qmin16);
    __m128i zb = _mm_sub_epi16(_mm_packs_epi32(z[2], z[3]), k->qmin16);
    __m128i a = _mm_adds_epi16(_mm_packs_epi32(c[0], c[1]), za);
    __m128i b = _mm_adds_epi16(_mm_packs_epi32(c[2], c[3]), zb);
    __m128i p = _mm_xor_si128(_mm_min_epu8(_mm_packus_epi16(a, b), k->cap), k->flip);
    if (yk == QK_Y_B8) _mm_storeu_si128((__m128i *)y, p);
    else if (yk == QK_Y_P4) _mm_storel_epi64((__m128i *)y, qx_pack4(p));
    else qx_store32(y, qx_pack2(p));
}

/* QV_W codes as int32: the low `bits` bits; signed 8- and 16-bit codes when sgn is 1; sgn 2:
 * sign-extended from bit `bits - 1` by h (that bit). */
QK_ALWAYS_INLINE vi qv_load_codes(int dk, unsigned bits, int sgn, vi h, const void *x)
{
    __m128i c;
    if (dk == QK_D_B16) {
        __m128i w = _mm_loadl_epi64((const __m128i *)x);
        if (sgn == 1) return _mm_cvtepi16_epi32(w);
        c = _mm_cvtepu16_epi32(w);
    } else if (dk == QK_D_B8) {
        __m128i b = qx_load32(x);
        if (sgn == 1) return _mm_cvtepi8_epi32(b);
        c = _mm_cvtepu8_epi32(b);
        if (bits < 8) c = _mm_and_si128(c, _mm_set1_epi32((1 << bits) - 1));
    } else if (dk == QK_D_P4) {
        c = _mm_cvtepu8_epi32(qx_unpack4(qx_load16(x)));
    } else {
        c = _mm_cvtepu8_epi32(qx_unpack2(_mm_cvtsi32_si128(*(const unsigned char *)x)));
    }
    return sgn == 2 ? _mm_sub_epi32(_mm_xor_si128(c, h), h) : c;   /* sign-extends a field, h its top bit */
}

/* bfloat16 bits (in the low half of each lane) of v, as qk_f32_to_bf16. */
QK_ALWAYS_INLINE vi qv_bf16_bits(vf v)
{
    __m128i u = _mm_castps_si128(v);
    __m128i hi = _mm_srli_epi32(u, 16);
    __m128i r = _mm_add_epi32(u, _mm_add_epi32(_mm_and_si128(hi, _mm_set1_epi32(1)),
                                               _mm_set1_epi32(0x7fff)));
    r = _mm_srli_epi32(r, 16);
    __m128i nan = _mm_or_si128(_mm_and_si128(hi, _mm_set1_epi32(0x8000)), _mm_set1_epi32(0x7fc0));
    return _mm_blendv_epi8(r, nan, _mm_castps_si128(_mm_cmpunord_ps(v, v)));
}

QK_ALWAYS_INLINE void qv_store_out(int ok, void *y, vf v)
{
    if (ok == QK_O_F32) {
        _mm_storeu_ps((float *)y, v);
    } else {   /* bfloat16 (float16 is not built at this level) */
        __m128i b = qv_bf16_bits(v);
        _mm_storel_epi64((__m128i *)y, _mm_packus_epi32(b, b));
    }
}

/* 64 bytes from an L1 buffer to a cache line of y, bypassing the caches (driver.h) */
QK_ALWAYS_INLINE void qv_stream64(void *y, const void *src)
{
    for (int k = 0; k < 4; k++)
        _mm_stream_si128((__m128i *)y + k, _mm_loadu_si128((const __m128i *)src + k));
}

#define QD_BLOCK_RUN 0   /* (driver.h's block runs: code this -Os tier goes without) */
#define QD_FAST_SRC 1    /* (but inline period / window chunks: 9 KB for 88 -> 56 cliffs of 408) */
#include "generic/driver.h"
#include "generic/minmax.h"
#include "generic/entries.h"

#define QK_ENTRY_sse41(kind, ...) QD_##kind##FN(__VA_ARGS__)
#include "generic/registry.def"
#undef QK_ENTRY_sse41
#define QK_ENTRY_sse41(kind, ...) QD_##kind##SET(__VA_ARGS__)
const qk_table qk_sse41_table = {
    .name = "sse41",
#include "generic/registry.def"
    .minmax_f32 = QD_N(minmax),
    .recip_f32 = QD_N(recip),
    .widen_zp = QD_N(widen),
    .minmax_cols = QD_N(minmax_cols),
    .minmax_groups = QD_N(minmax_groups),
};
