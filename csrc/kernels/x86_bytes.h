/* Helpers shared by the x86 vector layers: 128-bit packing of codes into nibbles / 2-bit
 * fields and back, and small loads and stores. SSE4.1 only, so that every x86 file can use
 * them; the includer provides the intrinsics
 * (immintrin.h, or SIMDe in the AVX-512 emulation test). */
#ifndef QSIMD_X86_BYTES_H
#define QSIMD_X86_BYTES_H

#include <stdint.h>
#include <string.h>

#include "convert.h"   /* QK_ALWAYS_INLINE: the helpers must inline even at -Os (sse41.c) */

/* A 32-bit pattern as the int the set1 intrinsics take (no signed overflow in a shift) */
QK_ALWAYS_INLINE int qv_bits_i32(uint32_t u)
{
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* 16 code bytes (each < 16) -> 8 bytes in the low half, element 0 in the low nibble:
 * maddubs adds b0 * 1 + b1 * 16 per byte pair, never saturating. */
QK_ALWAYS_INLINE __m128i qx_pack4(__m128i b)
{
    __m128i w = _mm_maddubs_epi16(b, _mm_set1_epi16(0x1001));
    return _mm_packus_epi16(w, w);
}

/* 16 code bytes (each < 4) -> 4 bytes in the low dword, element 0 in the lowest bits. */
QK_ALWAYS_INLINE __m128i qx_pack2(__m128i b)
{
    __m128i w = _mm_maddubs_epi16(b, _mm_set1_epi16(0x0401));    /* c0 + 4 c1 */
    __m128i d = _mm_madd_epi16(w, _mm_set1_epi32(0x00100001));  /* + 16 (c2 + 4 c3) */
    d = _mm_packs_epi32(d, d);
    return _mm_packus_epi16(d, d);
}

/* Bytes -> their nibbles as bytes (low nibble first): the low 8 bytes of b give 16. */
QK_ALWAYS_INLINE __m128i qx_unpack4(__m128i b)
{
    __m128i m = _mm_set1_epi8(0x0f);
    return _mm_unpacklo_epi8(_mm_and_si128(b, m), _mm_and_si128(_mm_srli_epi16(b, 4), m));
}

/* Bytes -> their 2-bit fields as bytes (lowest first): the low 4 bytes of b give 16. */
QK_ALWAYS_INLINE __m128i qx_unpack2(__m128i b)
{
    __m128i n = qx_unpack4(b), m = _mm_set1_epi8(0x03);
    return _mm_unpacklo_epi8(_mm_and_si128(n, m), _mm_and_si128(_mm_srli_epi16(n, 2), m));
}

QK_ALWAYS_INLINE __m128i qx_load32(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return _mm_cvtsi32_si128(v);
}

QK_ALWAYS_INLINE __m128i qx_load16(const void *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return _mm_cvtsi32_si128(v);
}

QK_ALWAYS_INLINE void qx_store32(void *p, __m128i v)
{
    int32_t w = _mm_cvtsi128_si32(v);
    memcpy(p, &w, 4);
}

#endif
