/* Helpers shared by the x86 kernel files: the streaming-store and alignment rules of the
 * run drivers, and 128-bit packing of codes into nibbles / 2-bit fields and back. SSE4.1
 * only, so that every x86 file can use them; the includer provides the intrinsics
 * (immintrin.h, or SIMDe in the AVX-512 emulation test). */
#ifndef QSIMD_X86_BYTES_H
#define QSIMD_X86_BYTES_H

#include <stdint.h>
#include <string.h>

#include "convert.h"   /* QK_ALWAYS_INLINE: the helpers must inline even at -Os (sse41.c) */

/* Table entries get the instruction set's name (QV_ISA, defined by each x86 file) in front,
 * so that a profiler tells avx2_q_... from avx512_q_... */
#define QT_N(name) QT_N2(QV_ISA, name)
#define QT_N2(isa, name) QT_N3(isa, name)
#define QT_N3(isa, name) isa##_##name

/* Calls the operator layer marks with p->stream (too large to stay in the caches) write
 * the output of long single-scale runs with non-temporal stores: the destination's cache
 * lines are not read first (a sixth less memory traffic for float32 -> uint8, nearly half
 * for uint8 -> float32). The output is assembled QT_NT_LINE bytes at a time in a buffer that
 * stays in L1 and streamed out from there, so every output kind works alike; the buffer is
 * large enough that its stores have left the store buffer when it is read back (a 64-byte
 * load of data just written by narrower stores stalls on store forwarding). Runs shorter
 * than QT_NT_MIN output bytes keep ordinary stores. */
#define QT_NT_LINE 2048
#define QT_NT_MIN (4 * QT_NT_LINE)
/* Dequantized float32 runs at least this long (from 8- and 16-bit codes, float16 and
 * bfloat16; AVX2 and AVX-512) store from a cache line boundary on: a store split over two
 * lines costs about half as much again on Intel cores, and numpy's allocations are only
 * 16-byte aligned. */
#define QT_DALIGN_MIN ((size_t)1024)

/* 1 when [x, x + xb) and [y, y + yb) do not overlap. Only then may a run end with a full
 * vector that overlaps the previous one (rewriting the same bytes): done in place it would
 * read inputs already overwritten. */
QK_ALWAYS_INLINE int qt_disjoint(const void *x, size_t xb, const void *y, size_t yb)
{
    uintptr_t a = (uintptr_t)x, b = (uintptr_t)y;
    return a + xb <= b || b + yb <= a;
}

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

QK_ALWAYS_INLINE void qx_store16(void *p, __m128i v)
{
    uint16_t w = (uint16_t)_mm_cvtsi128_si32(v);
    memcpy(p, &w, 2);
}

#endif
