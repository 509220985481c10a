/* The preprocessing chain's loops (chain_impl.h) compiled for AVX2 with loop vectorisation:
 * the float32 operations eight at a time (divisions stay divisions: exact, as the scalar
 * loops), integer-to-float conversion and the table lookups. chain.c calls these only when
 * the active instruction set is AVX2 or AVX-512. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

/* y[i] = tab[x[i * s]] for 8-bit codes and inputs (tab NULL: y[i] = x[i * s]), 32 at a
 * time, for s = 1 (contiguous) and s = 3 (one channel of interleaved RGB: HWC -> CHW). A 256-entry table is 16 rows of 16
 * bytes: pshufb picks within a row by the index's low nibble, a compare on the high nibble
 * keeps the right row. Returns the elements done (the caller finishes the row). */
static size_t lookup_u8_avx2(const unsigned char *tab, const uint8_t *x, int64_t s, size_t len,
                             uint8_t *y, size_t avail)
{
    if ((s != 1 && s != 3) || len < 32 || (s == 1 && !tab)) return 0;
    __m256i rows[16];
    for (int k = 0; tab && k < 16; k++)
        rows[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(tab + 16 * k)));
    const __m256i nib = _mm256_set1_epi8(0x0f);
    /* bytes 0, 3, 6, ... of 48 bytes in three 16-byte loads: the shuffles of each load (-1:
     * zero) */
    const __m128i m0 = _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i m1 = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1);
    const __m128i m2 = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13);
    size_t i = 0;
    /* a chunk of s = 3 reads 96 bytes, 2 past its last element: those must be in x (the
     * next row's, mostly) */
    for (; i + 32 <= len && (size_t)s * i + 32 * (size_t)s <= avail; i += 32) {
        __m256i idx;
        if (s == 1) {
            idx = _mm256_loadu_si256((const __m256i *)(x + i));
        } else {
            const uint8_t *p = x + 3 * i;
            __m128i a = _mm_or_si128(
                _mm_or_si128(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), m0),
                             _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), m1)),
                _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), m2));
            __m128i b = _mm_or_si128(
                _mm_or_si128(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), m0),
                             _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 64)), m1)),
                _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 80)), m2));
            idx = _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
        }
        if (!tab) {   /* the de-interleave alone (a transpose of computed codes) */
            _mm256_storeu_si256((__m256i *)(y + i), idx);
            continue;
        }
        __m256i lo = _mm256_and_si256(idx, nib);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(idx, 4), nib);
        __m256i r = _mm256_and_si256(_mm256_cmpeq_epi8(hi, _mm256_setzero_si256()),
                                     _mm256_shuffle_epi8(rows[0], lo));
        /* written out: a loop here stays a loop at -O2, and its counter costs as much as the
         * work */
#define ROW(k)                                                                             \
        r = _mm256_or_si256(r, _mm256_and_si256(_mm256_cmpeq_epi8(hi, _mm256_set1_epi8(k)), \
                                                _mm256_shuffle_epi8(rows[k], lo)))
        ROW(1); ROW(2); ROW(3); ROW(4); ROW(5); ROW(6); ROW(7); ROW(8);
        ROW(9); ROW(10); ROW(11); ROW(12); ROW(13); ROW(14); ROW(15);
#undef ROW
        _mm256_storeu_si256((__m256i *)(y + i), r);
    }
    return i;
}
#define CHAIN_LOOKUP_U8 lookup_u8_avx2

#include "chain_impl.h"
#include "chain_avx2.h"

void qs_chain_gather_avx2(const chain_op *ops, int n_ops, const geom *g, int jc, const char *x,
                          int32_t xt, size_t o0, size_t o1, float *t)
{
    gather_chain(ops, n_ops, g, jc, x, xt, o0, o1, t);
}

void qs_chain_lookup_avx2(size_t esize, const geom *g, int jc, const unsigned char *tab,
                          size_t nv, int xbytes, const char *x, char *y)
{
    lookup_all(esize, g, jc, tab, nv, xbytes, x, y);
}
