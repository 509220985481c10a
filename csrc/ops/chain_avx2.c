/* The preprocessing chain's loops (chain_impl.h) compiled for AVX2 with loop vectorisation:
 * the float32 operations eight at a time (divisions stay divisions: exact, as the scalar
 * loops), integer-to-float conversion and the table lookups. chain.c calls these only when
 * the active instruction set is AVX2 or AVX-512. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* chain_impl.h's row loops call these vector loops (defined below, after its types) */
struct chain_affine;
static size_t lookup_u8_avx2(const unsigned char *tab, const uint8_t *x, int64_t s, size_t len,
                             uint8_t *y, size_t avail);
static size_t affine_u8_avx2(const struct chain_affine *f, const uint8_t *x, int64_t s,
                             size_t len, uint8_t *y, size_t avail);
struct geom;
static int frame3_avx2(const struct geom *g, int jc, const struct chain_affine *aff,
                       const unsigned char *tab, const uint8_t *x, uint8_t *y);
#define CHAIN_LOOKUP_U8 lookup_u8_avx2
#define CHAIN_AFFINE_U8 affine_u8_avx2
#define CHAIN_FRAME3 frame3_avx2

#include "chain_impl.h"
#include "chain_avx2.h"

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

/* The same row through the channel's line (chain_impl.h's chain_affine), 32 elements at a
 * time, when the table is one: an 8-bit lookup is 16 shuffles per 32 codes, the line 4
 * (bytes to 32-bit lanes) plus a multiply-add, an add and a shift per 8 codes. Vector v takes
 * elements 4v..4v+3 in its low half and 16+4v..16+4v+3 in its high half, so the saturating
 * packs (which work per half) leave the 32 codes in order. Returns the elements done. */
static size_t affine_u8_avx2(const struct chain_affine *f, const uint8_t *x, int64_t s, size_t len,
                             uint8_t *y, size_t avail)
{
    if (f->k < 0 || (s != 1 && s != 3) || len < 32) return 0;
    const __m256i a = _mm256_set1_epi32(f->a & 0xffff);   /* the high word 0: madd = u * a */
    const __m256i b = _mm256_set1_epi32(f->b);
    const __m128i k = _mm_cvtsi32_si128(f->k);
    const __m256i flip = _mm256_set1_epi32(f->x_signed ? 0x80 : 0);
    /* the shuffles to 32-bit lanes: s = 3, bytes 0, 3, 6, 9 of each half; s = 1, bytes 4v..4v+3
     * of each half for vector v */
    const __m256i c3 = _mm256_setr_epi8(0, -1, -1, -1, 3, -1, -1, -1, 6, -1, -1, -1, 9, -1, -1, -1,
                                        0, -1, -1, -1, 3, -1, -1, -1, 6, -1, -1, -1, 9, -1, -1, -1);
    const __m256i c1 = _mm256_setr_epi8(0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, 3, -1, -1, -1,
                                        0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, 3, -1, -1, -1);
    size_t i = 0;
    /* vector v of the chunk at p: its four 32-bit lanes of u (s = 3 reads bytes [0, 100) of
     * the chunk: 4 past its last element) */
#define U3(v) _mm256_shuffle_epi8(_mm256_inserti128_si256(_mm256_castsi128_si256(            \
        _mm_loadu_si128((const __m128i *)(p + 12 * (v)))),                                   \
        _mm_loadu_si128((const __m128i *)(p + 48 + 12 * (v))), 1), c3)
#define U1(v) _mm256_shuffle_epi8(raw, _mm256_add_epi32(c1, _mm256_set1_epi32(4 * (v))))
#define LINE(u) _mm256_sra_epi32(_mm256_add_epi32(                                          \
        _mm256_madd_epi16(_mm256_xor_si256(u, flip), a), b), k)
#define CHUNKS(COND, LOAD, U, PACK)                                                          \
    for (; i + 32 <= len && (COND); i += 32) {                                               \
        const uint8_t *p = x + (size_t)s * i;                                                \
        LOAD;                                                                                \
        __m256i w0 = _mm256_packs_epi32(LINE(U(0)), LINE(U(1)));                             \
        __m256i w1 = _mm256_packs_epi32(LINE(U(2)), LINE(U(3)));                             \
        _mm256_storeu_si256((__m256i *)(y + i), PACK(w0, w1));                               \
    }
    if (s == 3 && f->y_signed) CHUNKS(3 * i + 100 <= avail, (void)0, U3, _mm256_packs_epi16)
    else if (s == 3) CHUNKS(3 * i + 100 <= avail, (void)0, U3, _mm256_packus_epi16)
    else if (f->y_signed)
        CHUNKS(1, __m256i raw = _mm256_loadu_si256((const __m256i *)p), U1, _mm256_packs_epi16)
    else CHUNKS(1, __m256i raw = _mm256_loadu_si256((const __m256i *)p), U1, _mm256_packus_epi16)
#undef U3
#undef U1
#undef LINE
#undef CHUNKS
    return i;
}


/* The de-interleave of 96 bytes of three-channel codes (c0 c1 c2 c0 ...) into 32 bytes per
 * channel: channel c's bytes 3j + c of each 48, mk[c][l] picking those of the l-th 16 bytes
 * (-1: zero), in both halves (float3_store's order). */
static void deint3_masks(__m256i mk[3][3])
{
    for (int c = 0; c < 3; c++)
        for (int l = 0; l < 3; l++) {
            int8_t m[16];
            for (int j = 0; j < 16; j++) {
                int at = 3 * j + c - 16 * l;
                m[j] = (int8_t)(at >= 0 && at < 16 ? at : -1);
            }
            mk[c][l] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)m));
        }
}

/* 96 codes in the order of float3_chain's vectors (b[u]: codes 16u..16u+15 in its low half,
 * 48+16u.. in its high half) de-interleaved to y, y + plane and y + 2 plane. */
QK_ALWAYS_INLINE void float3_store(const __m256i mk[3][3], const __m256i b[3], uint8_t *y,
                                   size_t plane)
{
    QD_UNROLL
    for (int ch = 0; ch < 3; ch++)
        _mm256_storeu_si256((__m256i *)(y + (size_t)ch * plane),
                            _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(b[0], mk[ch][0]),
                                                            _mm256_shuffle_epi8(b[1], mk[ch][1])),
                                            _mm256_shuffle_epi8(b[2], mk[ch][2])));
}

/* Interleaved three-channel rows (HWC -> CHW: y's axes ..., C = 3, H, W read from x's
 * ..., H, W, C), the three output rows of an image row at once, so each 96 bytes of x are
 * loaded once for the three channels: with tab, every channel a line (f); without, a
 * transpose of codes already computed (jc is then -1). Returns 0 when g is not that layout. */
static int frame3_avx2(const geom *g, int jc, const chain_affine *f, const unsigned char *tab,
                       const uint8_t *x, uint8_t *y)
{
    size_t w, h, rows, plane;
    if (!frame3_layout(g, jc, f, tab, 32, &w, &h, &rows, &plane)) return 0;
    if (!tab) {
        __m256i mk[3][3];
        deint3_masks(mk);
        for (size_t r = 0; r < rows; r++) {
            const uint8_t *xr = x + r * w * 3;
            uint8_t *yr = y + r / h * 3 * plane + r % h * w;
            size_t i = 0;
            for (; i + 32 <= w; i += 32) {
                /* bytes 16u.. in the low half, 48 + 16u.. in the high half: float3_store's
                 * order */
                __m256i b[3];
                const uint8_t *p = xr + 3 * i;
                for (int u = 0; u < 3; u++)
                    b[u] = _mm256_inserti128_si256(
                        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p + 16 * u))),
                        _mm_loadu_si128((const __m128i *)(p + 48 + 16 * u)), 1);
                float3_store((const __m256i (*)[3])mk, b, yr + i, plane);
            }
            for (; i < w; i++)
                for (int c = 0; c < 3; c++) yr[(size_t)c * plane + i] = xr[3 * i + c];
        }
        return 1;
    }
    const __m256i flip = _mm256_set1_epi32(f->x_signed ? 0x80 : 0);
    __m256i a[3], b[3], ctl[3];
    __m128i k[3];
    for (int c = 0; c < 3; c++) {
        a[c] = _mm256_set1_epi32(f[c].a & 0xffff);
        b[c] = _mm256_set1_epi32(f[c].b);
        k[c] = _mm_cvtsi32_si128(f[c].k);
        /* bytes c, c+3, c+6, c+9 of each half to the low bytes of its 32-bit lanes */
        ctl[c] = _mm256_add_epi32(_mm256_setr_epi32(0xffffff00, 0xffffff03, 0xffffff06,
                                                    0xffffff09, 0xffffff00, 0xffffff03,
                                                    0xffffff06, 0xffffff09),
                                  _mm256_set1_epi32(c));
    }
    for (size_t r = 0; r < rows; r++) {
        const uint8_t *xr = x + r * w * 3;
        /* image r / H's planes start at (r / H) * 3 * plane; row r % H within them */
        uint8_t *yr = y + r / h * 3 * plane + r % h * w;
        size_t i = 0;
        /* a chunk reads bytes [0, 100) from its first pixel: 4 past its last */
#define RAW(v) _mm256_inserti128_si256(                                                      \
            _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p + 12 * (v)))),           \
            _mm_loadu_si128((const __m128i *)(p + 48 + 12 * (v))), 1)
#define LINE(FLIP, r, c) _mm256_sra_epi32(_mm256_add_epi32(_mm256_madd_epi16(                 \
            FLIP(_mm256_shuffle_epi8(r, ctl[c])), a[c]), b[c]), k[c])
#define CHANNEL(FLIP, PACK, c)                                                               \
            _mm256_storeu_si256((__m256i *)(yr + (size_t)(c) * plane + i), PACK(             \
                _mm256_packs_epi32(LINE(FLIP, r0, c), LINE(FLIP, r1, c)),                    \
                _mm256_packs_epi32(LINE(FLIP, r2, c), LINE(FLIP, r3, c))))
#define CHUNKS(FLIP, PACK)                                                                   \
        for (; i + 32 <= w && (r * w + i) * 3 + 100 <= g->n; i += 32) {                      \
            const uint8_t *p = xr + 3 * i;                                                   \
            __m256i r0 = RAW(0), r1 = RAW(1), r2 = RAW(2), r3 = RAW(3);                      \
            CHANNEL(FLIP, PACK, 0);                                                          \
            CHANNEL(FLIP, PACK, 1);                                                          \
            CHANNEL(FLIP, PACK, 2);                                                          \
        }
#define FLIPPED(u) _mm256_xor_si256(u, flip)
#define AS_IS(u) (u)
        if (f->x_signed && f->y_signed) CHUNKS(FLIPPED, _mm256_packs_epi16)
        else if (f->x_signed) CHUNKS(FLIPPED, _mm256_packus_epi16)
        else if (f->y_signed) CHUNKS(AS_IS, _mm256_packs_epi16)
        else CHUNKS(AS_IS, _mm256_packus_epi16)
#undef RAW
#undef LINE
#undef CHANNEL
#undef CHUNKS
#undef FLIPPED
#undef AS_IS
        for (; i < w; i++)
            for (int c = 0; c < 3; c++) yr[(size_t)c * plane + i] = tab[c * 256 + xr[3 * i + c]];
    }
    return 1;
}

void qs_chain_gather_avx2(const chain_op *ops, int n_ops, const geom *g, int jc, const char *x,
                          int32_t xt, size_t o0, size_t o1, float *t)
{
    gather_chain(ops, n_ops, g, jc, x, xt, o0, o1, t);
}

void qs_chain_lookup_avx2(size_t esize, const geom *g, int jc, const unsigned char *tab,
                          size_t nv, int xbytes, const chain_affine *aff, const char *x, char *y)
{
    lookup_all(esize, g, jc, tab, nv, xbytes, aff, x, y);
}

/* Float32 frames, 32 pixels (96 floats) at a time. Vector j holds floats 4j..4j+3 in its low
 * half and 48+4j..48+4j+3 in its high half, so that the in-lane packs leave codes 0..47 in
 * low halves and 48..95 in high halves, each in order: one 256-bit shuffle then serves 16
 * pixels of each half. Both halves of vector j see channels (4j + l) % 3, so k[i][j % 3]
 * holds operation i's constants for vector j.
 * The chain of 32 pixels into t (in that vector order). */
QK_ALWAYS_INLINE void float3_chain(const int32_t *kind, int n_ops, const __m256 (*k)[3],
                                   const float *p, __m256 *t)
{
    __m256 v[12];
    QD_UNROLL12
    for (int j = 0; j < 12; j++)
        v[j] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p + 4 * j)),
                                    _mm_loadu_ps(p + 48 + 4 * j), 1);
    for (int i = 0; i < n_ops; i++) {
        /* one rounding per operation, in the chain's order */
#define EACH(OP) QD_UNROLL12 for (int j = 0; j < 12; j++) v[j] = OP(v[j], k[i][j % 3]); break
        switch (kind[i]) {
        case QSIMD_PRE_ADD: EACH(_mm256_add_ps);
        case QSIMD_PRE_SUB: EACH(_mm256_sub_ps);
        case QSIMD_PRE_MUL: EACH(_mm256_mul_ps);
        default: EACH(_mm256_div_ps);
        }
#undef EACH
    }
    QD_UNROLL12
    for (int j = 0; j < 12; j++) t[j] = v[j];
}

/* The chain's results t of 32 pixels to codes (qs_chain_float3_avx2's quantization),
 * de-interleaved to y, y + plane and y + 2 plane. */
QK_ALWAYS_INLINE void float3_quant(const __m256 *s, const __m256 *r, const __m256 *xl,
                                   const __m256i *z16, int y_signed, const __m256i mk[3][3],
                                   const __m256 *t, uint8_t *y, size_t plane)
{
    __m256i c[12];
    QD_UNROLL12
    for (int j = 0; j < 12; j++) {
        int e = j % 3;
        __m256 n = _mm256_min_ps(xl[e], t[j]);   /* NaN stays NaN */
        __m256 q0 = _mm256_mul_ps(n, r[e]);
        /* NaN, -inf and quotients below int32 convert to INT_MIN, which saturates to qmin */
        c[j] = _mm256_cvtps_epi32(_mm256_fmadd_ps(_mm256_fnmadd_ps(q0, s[e], n), r[e], q0));
    }
    __m256i b[3];
    QD_UNROLL
    for (int u = 0; u < 3; u++) {
        /* the zero point added with int16 saturation; the int16 lanes of pair 2u + h have
         * the channels of z16[(2u + h) % 3] */
        __m256i w0 = _mm256_adds_epi16(_mm256_packs_epi32(c[4 * u], c[4 * u + 1]),
                                       z16[(2 * u) % 3]);
        __m256i w1 = _mm256_adds_epi16(_mm256_packs_epi32(c[4 * u + 2], c[4 * u + 3]),
                                       z16[(2 * u + 1) % 3]);
        b[u] = y_signed ? _mm256_packs_epi16(w0, w1) : _mm256_packus_epi16(w0, w1);
    }
    float3_store(mk, b, y, plane);
}

/* The fast form (chain_fq.fast) of 32 pixels: F = x a + b per lane in one rounding, bounded
 * above at hi, rounded half to even; the packs saturate below. Stores the codes and returns
 * 1 when every lane's (F - rint(F))^2 is at most lim2 (then the exact value rounds to the
 * same code: chain.c's fuse_line); else stores nothing and returns 0. The square and the
 * difference run on the FMA units, which the rest leaves idle. */
QK_ALWAYS_INLINE int float3_line(const __m256 *a, const __m256 *b, __m256 hi, __m256 lim2,
                                 int y_signed, const __m256i mk[3][3], const float *p,
                                 uint8_t *y, size_t plane)
{
    __m256 dmax = _mm256_setzero_ps();
    __m256i c[12];
    QD_UNROLL12
    for (int j = 0; j < 12; j++) {
        __m256 x = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p + 4 * j)),
                                        _mm_loadu_ps(p + 48 + 4 * j), 1);
        /* bounded above only: +inf and huge F to hi; below, the conversion turns -inf,
         * NaN and F under -2^31 into INT_MIN, and the packs saturate to qmin */
        __m256 f = _mm256_min_ps(hi, _mm256_fmadd_ps(x, a[j % 3], b[j % 3]));
        __m256 r = _mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        /* f - r, exact; NaN for -inf and NaN, whose square max skips (NaN first operand) */
        __m256 d = _mm256_fnmadd_ps(r, _mm256_set1_ps(1.0f), f);
        dmax = _mm256_max_ps(_mm256_mul_ps(d, d), dmax);
        c[j] = _mm256_cvtps_epi32(r);
    }
    __m256 bad = _mm256_cmp_ps(dmax, lim2, _CMP_GT_OQ);
    if (_mm256_movemask_ps(bad)) return 0;
    __m256i w[3];
    QD_UNROLL
    for (int u = 0; u < 3; u++) {
        __m256i w0 = _mm256_packs_epi32(c[4 * u], c[4 * u + 1]);
        __m256i w1 = _mm256_packs_epi32(c[4 * u + 2], c[4 * u + 3]);
        w[u] = y_signed ? _mm256_packs_epi16(w0, w1) : _mm256_packus_epi16(w0, w1);
    }
    float3_store(mk, w, y, plane);
    return 1;
}

/* What a chunk of the exact form needs, built once per run. */
typedef struct f3_exact {
    __m256 k[CHAIN_FQ_OPS][3], s[3], r[3], xl[3];
    __m256i z16[3], mk[3][3];
    int32_t kind[CHAIN_FQ_OPS];
    int n_ops, y_signed;
} f3_exact;

/* One chunk by the exact form (kept out of line: the fast form's loop stays lean). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static void float3_exact(const f3_exact *e, const float *p, uint8_t *y, size_t plane)
{
    __m256 t[12];
    float3_chain(e->kind, e->n_ops, (const __m256 (*)[3])e->k, p, t);
    float3_quant(e->s, e->r, e->xl, e->z16, e->y_signed, (const __m256i (*)[3])e->mk, t, y,
                 plane);
}

int qs_chain_float3_avx2(const chain_op *ops, int n_ops, const geom *g, int jc,
                         const chain_fq *q, const float *x, uint8_t *y)
{
    size_t w, h, rows, plane;
    if (n_ops > CHAIN_FQ_OPS || !frame3_layout(g, -1, NULL, NULL, 1, &w, &h, &rows, &plane) ||
        (jc >= 0 && jc != g->nd - 3))
        return 0;
    f3_exact e;
    deint3_masks(e.mk);
    e.n_ops = n_ops;
    e.y_signed = q->y_signed;
    __m256 la[3], lb[3];
    for (int v = 0; v < 3; v++) {
        /* lane l of either half of vector v: channel (4v + l % 4) % 3; of the int16 pairs
         * (8v + l % 8) % 3 */
        float kv[8], sv[8], rv[8], lv[8], av[8], bv[8];
        int16_t zv[16];
        for (int i = 0; i < n_ops; i++) {
            for (int l = 0; l < 8; l++)
                kv[l] = ops[i].count > 1 ? ops[i].v[(4 * v + l % 4) % 3] : ops[i].v[0];
            e.k[i][v] = _mm256_loadu_ps(kv);
        }
        for (int l = 0; l < 8; l++) {
            int c = (4 * v + l % 4) % 3;
            sv[l] = q->s[c];
            rv[l] = q->r[c];
            lv[l] = 131072.0f * q->s[c];   /* exact: a power of two times a normal scale */
            av[l] = q->a[c];
            bv[l] = q->b[c];
        }
        for (int l = 0; l < 16; l++) zv[l] = (int16_t)q->z[(8 * v + l % 8) % 3];
        e.s[v] = _mm256_loadu_ps(sv);
        e.r[v] = _mm256_loadu_ps(rv);
        e.xl[v] = _mm256_loadu_ps(lv);
        e.z16[v] = _mm256_loadu_si256((const __m256i *)zv);
        la[v] = _mm256_loadu_ps(av);
        lb[v] = _mm256_loadu_ps(bv);
    }
    for (int i = 0; i < n_ops; i++) e.kind[i] = ops[i].kind;
    const __m256 hi = _mm256_set1_ps(q->y_signed ? 127.0f : 255.0f);
    const __m256 lim2 = _mm256_set1_ps(q->lim2);
    const __m256i (*mc)[3] = (const __m256i (*)[3])e.mk;
    /* HWC images are contiguous runs of pixels in x and in each of y's planes. A chunk takes
     * the fast form where it holds, else the chain and the quantization as defined. */
#define CHUNK(P, Y, PLANE)                                                                   \
    do {                                                                                     \
        if (!q->fast || !float3_line(la, lb, hi, lim2, q->y_signed, mc, P, Y, PLANE))         \
            float3_exact(&e, P, Y, PLANE);                                                   \
    } while (0)
    for (size_t img = 0; img < rows / h; img++) {
        const float *xi = x + img * 3 * plane;
        uint8_t *yi = y + img * 3 * plane;
        size_t i = 0;
        for (; i + 32 <= plane; i += 32) CHUNK(xi + 3 * i, yi + i, plane);
        if (i < plane) {   /* the last pixels through a zero-padded chunk */
            float pad[96];
            uint8_t out[96];
            size_t m = plane - i;
            memset(pad, 0, sizeof pad);
            memcpy(pad, xi + 3 * i, 3 * m * sizeof(float));
            CHUNK(pad, out, 32);
            for (int c = 0; c < 3; c++) memcpy(yi + (size_t)c * plane + i, out + 32 * c, m);
        }
    }
#undef CHUNK
    return 1;
}
