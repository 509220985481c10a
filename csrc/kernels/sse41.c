/* SSE4.1 kernels: 4 float32 lanes. No F16C at this level, so every float16 entry is left
 * to the scalar table; bfloat16 is done with integer operations. The run drivers live in
 * x86_template.h; this file is only the vector layer. */
#include <immintrin.h>

#include "kernels.h"
#include "x86_bytes.h"

#define QV_W 4
#define QV_ISA sse41   /* table entries are named sse41_... (QT_N in x86_bytes.h) */
#define QV_HAVE_F16C 0
/* bfloat16 outputs of integer dequantization and bfloat16 inputs of quantization: scalar.c
 * (x86_template.h; rare on CPUs without AVX2, 33 KB of code) */
#define QV_BF16_OUT 0
#define QV_BF16_IN 0
/* No FMA at this level: an exact residual x - q*s would need a split product and a
 * compensated sum (about 20 operations), no faster than divps, so the quotient divides. */
#define QV_HAVE_FMA 0

typedef __m128 vf;
typedef __m128i vi;
typedef __m128i vm;   /* byte-output mask, as 16-bit lanes */

QK_ALWAYS_INLINE vf qv_set1(float f) { return _mm_set1_ps(f); }
QK_ALWAYS_INLINE vi qv_set1_i(int32_t v) { return _mm_set1_epi32(v); }
QK_ALWAYS_INLINE vf qv_loadu_f(const float *p) { return _mm_loadu_ps(p); }
QK_ALWAYS_INLINE vi qv_loadu_i(const int32_t *p) { return _mm_loadu_si128((const __m128i *)p); }
QK_ALWAYS_INLINE void qv_storeu_f(float *p, vf v) { _mm_storeu_ps(p, v); }
QK_ALWAYS_INLINE void qv_storeu_i(int32_t *p, vi v) { _mm_storeu_si128((__m128i *)p, v); }
QK_ALWAYS_INLINE vf qv_div(vf a, vf b) { return _mm_div_ps(a, b); }
QK_ALWAYS_INLINE vf qv_mul(vf a, vf b) { return _mm_mul_ps(a, b); }
QK_ALWAYS_INLINE vf qv_max(vf a, vf b) { return _mm_max_ps(a, b); }
QK_ALWAYS_INLINE vf qv_min(vf a, vf b) { return _mm_min_ps(a, b); }
QK_ALWAYS_INLINE vi qv_cvt(vf a) { return _mm_cvtps_epi32(a); }   /* MXCSR: nearest-even */
QK_ALWAYS_INLINE vf qv_cvt_i2f(vi a) { return _mm_cvtepi32_ps(a); }
QK_ALWAYS_INLINE vi qv_add_i(vi a, vi b) { return _mm_add_epi32(a, b); }
QK_ALWAYS_INLINE vi qv_sub_i(vi a, vi b) { return _mm_sub_epi32(a, b); }
QK_ALWAYS_INLINE vm qv_mask(uint32_t m) { return _mm_set1_epi16((short)m); }

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

/* Codes are within [qmin, qmax] (the clamp made sure), so the packs below are exact: to
 * int16 with signed saturation, then the low byte (masked) of each. */
QK_ALWAYS_INLINE __m128i qv_bytes8(vi r0, vi r1, vm mask)
{
    return _mm_and_si128(_mm_packs_epi32(r0, r1), mask);
}

QK_ALWAYS_INLINE void qv_store1(int yk, void *y, vi r, vm mask)
{
    if (yk == QK_Y_B16) {
        __m128i h = _mm_and_si128(r, _mm_set1_epi32(0xffff));
        _mm_storel_epi64((__m128i *)y, _mm_packus_epi32(h, h));
        return;
    }
    __m128i w = qv_bytes8(r, r, mask);
    __m128i b = _mm_packus_epi16(w, w);
    if (yk == QK_Y_B8) qx_store32(y, b);
    else if (yk == QK_Y_P4) qx_store16(y, qx_pack4(b));
    else *(unsigned char *)y = (unsigned char)_mm_cvtsi128_si32(qx_pack2(b));
}

QK_ALWAYS_INLINE void qv_store4(int yk, void *y, vi r0, vi r1, vi r2, vi r3, vm mask)
{
    if (yk == QK_Y_B16) {
        __m128i ff = _mm_set1_epi32(0xffff);
        _mm_storeu_si128((__m128i *)y,
                         _mm_packus_epi32(_mm_and_si128(r0, ff), _mm_and_si128(r1, ff)));
        _mm_storeu_si128((__m128i *)y + 1,
                         _mm_packus_epi32(_mm_and_si128(r2, ff), _mm_and_si128(r3, ff)));
        return;
    }
    __m128i b = _mm_packus_epi16(qv_bytes8(r0, r1, mask), qv_bytes8(r2, r3, mask));
    if (yk == QK_Y_B8) _mm_storeu_si128((__m128i *)y, b);
    else if (yk == QK_Y_P4) _mm_storel_epi64((__m128i *)y, qx_pack4(b));
    else qx_store32(y, qx_pack2(b));
}

/* QV_W codes as int32. Sub-byte codes: the low `bits` bits, sign-extended when signed. */
QK_ALWAYS_INLINE vi qv_load_codes(int dk, unsigned bits, int sgn, const void *x)
{
    __m128i c;
    if (dk == QK_D_B16) {
        __m128i h = _mm_loadl_epi64((const __m128i *)x);
        return sgn ? _mm_cvtepi16_epi32(h) : _mm_cvtepu16_epi32(h);
    }
    if (dk == QK_D_B8) {
        __m128i b = qx_load32(x);
        if (bits == 8) return sgn ? _mm_cvtepi8_epi32(b) : _mm_cvtepu8_epi32(b);
        c = _mm_and_si128(_mm_cvtepu8_epi32(b), _mm_set1_epi32((1 << bits) - 1));
    } else if (dk == QK_D_P4) {
        c = _mm_cvtepu8_epi32(qx_unpack4(qx_load16(x)));
    } else {
        c = _mm_cvtepu8_epi32(qx_unpack2(_mm_cvtsi32_si128(*(const unsigned char *)x)));
    }
    if (sgn) {   /* (c ^ h) - h sign-extends a bits-wide field */
        __m128i h = _mm_set1_epi32(1 << (bits - 1));
        c = _mm_sub_epi32(_mm_xor_si128(c, h), h);
    }
    return c;
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

/* 64 bytes from an L1 buffer to a cache line of y, bypassing the caches (x86_template.h) */
QK_ALWAYS_INLINE void qv_stream64(void *y, const void *src)
{
    for (int k = 0; k < 4; k++)
        _mm_stream_si128((__m128i *)y + k, _mm_loadu_si128((const __m128i *)src + k));
}

#include "x86_template.h"

QT_TABLE(qk_sse41_table, "sse41");
