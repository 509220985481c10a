/* The per-element loops of a preprocessing chain (chain.c), included twice: by chain.c with
 * the baseline flags and by chain_avx2.c with AVX2 and loop vectorisation, which chain.c
 * calls when the active instruction set is AVX2 or AVX-512. Both are compiled without
 * floating-point contraction (the whole tree is), so every operation rounds once and the two
 * give the same bits. CHAIN_TYPES_ONLY: the types alone (chain_neon.c). */
#ifndef QSIMD_OPS_CHAIN_IMPL_H
#define QSIMD_OPS_CHAIN_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "qsimd.h"
#include "../kernels/convert.h"

typedef struct chain_op {
    int32_t kind;
    int64_t count;
    const float *v;
} chain_op;

/* One channel's 8-bit table as a line, where it is one (chain.c checks all 256 entries):
 * code = clamp(floor((a * u + b) / 2^k)) to the output's range, u the input byte (xor 0x80
 * for int8 inputs, so u grows with the value). k < 0: no such line, the table is used. */
typedef struct chain_affine {
    int32_t a, b, k;
    int32_t x_signed, y_signed;
} chain_affine;

/* t = a OP c for n elements (a may be t) */
static inline void apply_from(int32_t kind, float *t, const float *a, size_t n, float c)
{
    size_t i;
    switch (kind) {
    case QSIMD_PRE_ADD: for (i = 0; i < n; i++) t[i] = a[i] + c; break;
    case QSIMD_PRE_SUB: for (i = 0; i < n; i++) t[i] = a[i] - c; break;
    case QSIMD_PRE_MUL: for (i = 0; i < n; i++) t[i] = a[i] * c; break;
    default: for (i = 0; i < n; i++) t[i] = a[i] / c; break;
    }
}

static inline void apply_scalar(int32_t kind, float *t, size_t n, float c)
{
    apply_from(kind, t, t, n, c);
}

/* t = a OP c[i] */
static inline void apply_vector_from(int32_t kind, float *t, const float *a, size_t n,
                                     const float *c)
{
    size_t i;
    switch (kind) {
    case QSIMD_PRE_ADD: for (i = 0; i < n; i++) t[i] = a[i] + c[i]; break;
    case QSIMD_PRE_SUB: for (i = 0; i < n; i++) t[i] = a[i] - c[i]; break;
    case QSIMD_PRE_MUL: for (i = 0; i < n; i++) t[i] = a[i] * c[i]; break;
    default: for (i = 0; i < n; i++) t[i] = a[i] / c[i]; break;
    }
}

static inline void apply_vector(int32_t kind, float *t, size_t n, const float *c)
{
    apply_vector_from(kind, t, t, n, c);
}

/* An 8-bit quantization per tensor or along three channels, for the fused float frame path
 * (chain_avx2.c): each channel's scale (positive, inside the exact reciprocal form's range),
 * its reciprocal qk_recip(s), its zero point; the output int8 (y_signed) or uint8.
 * fast: the chain and the quotient of channel e as one line, F = RN(x a[e] + b[e]) with the
 * zero point in b; a lane whose F - rint(F) has a square of at most lim2 rounds as the
 * exact value does (chain.c's fuse_line says why). */
#define CHAIN_FQ_OPS 8
typedef struct chain_fq {
    float s[3], r[3];
    int32_t z[3];
    int32_t y_signed;
    int32_t fast;
    float a[3], b[3], lim2;
} chain_fq;

/* Output geometry of one run: y's dims, each y axis's stride in x (elements), and the y axis
 * of the channel (-1: none). */
typedef struct geom {
    int nd;
    int64_t d[QSIMD_MAX_DIMS];
    int64_t sst[QSIMD_MAX_DIMS];
    size_t n;
} geom;

/* The layout of the vector frame paths (chain_avx2.c, chain_neon.c): y's axes ..., C = 3,
 * H, W read from a contiguous x of axes ..., H, W, C (HWC -> CHW), rows of at least minw; with
 * tab, the channel axis is jc and every channel a line of f. 0 when g is not that layout; else
 * W, H, the image rows (all images) and the plane size. */
static inline int frame3_layout(const geom *g, int jc, const chain_affine *f,
                                const unsigned char *tab, int64_t minw, size_t *w, size_t *h,
                                size_t *rows, size_t *plane)
{
    int last = g->nd - 1, cj = last - 2;
    if (g->nd < 3 || g->d[cj] != 3 || g->sst[cj] != 1 || g->sst[last] != 3 ||
        g->sst[last - 1] != 3 * g->d[last] || g->d[last] < minw || (tab && jc != cj))
        return 0;
    int64_t st = 3 * g->d[last] * g->d[last - 1];
    for (int j = cj - 1; j >= 0; j--) {
        if (g->sst[j] != st) return 0;
        st *= g->d[j];
    }
    for (int c = 0; tab && c < 3; c++)
        if (f[c].k < 0) return 0;
    *w = (size_t)g->d[last];
    *h = (size_t)g->d[last - 1];
    *rows = g->n / 3 / *w;
    *plane = *w * *h;
    return 1;
}

#ifndef CHAIN_TYPES_ONLY

/* x's elements [src + i*s] for i < len as float32. */
static inline void load_row(const char *x, int32_t xt, int64_t src, int64_t s, size_t len, float *t)
{
#define LOAD(T, CONV)                                                                      \
    do {                                                                                   \
        const T *p = (const T *)x + src;                                                   \
        for (size_t i = 0; i < len; i++) t[i] = CONV(p[(int64_t)i * s]);                  \
    } while (0)
#define AS_FLOAT(v) ((float)(v))
    switch (xt) {
    case QSIMD_UINT8: LOAD(uint8_t, AS_FLOAT); break;
    case QSIMD_INT8: LOAD(int8_t, AS_FLOAT); break;
    case QSIMD_UINT16: LOAD(uint16_t, AS_FLOAT); break;
    case QSIMD_INT16: LOAD(int16_t, AS_FLOAT); break;
    case QSIMD_FLOAT16: LOAD(uint16_t, qk_f16_to_f32); break;
    case QSIMD_BFLOAT16: LOAD(uint16_t, qk_bf16_to_f32); break;
    default: LOAD(float, AS_FLOAT); break;
    }
#undef LOAD
#undef AS_FLOAT
}

/* Output elements [o0, o1) of the chain, in y's order, into t. */
static void gather_chain(const chain_op *ops, int n_ops, const geom *g, int jc, const char *x,
                         int32_t xt, size_t o0, size_t o1, float *t)
{
    int64_t idx[QSIMD_MAX_DIMS], src = 0;
    int nd = g->nd, last = nd - 1;
    size_t rem = o0;
    /* x read in its own order (contiguous) with short rows (HWC pixels): the whole range at
     * once, per-channel constants repeated to a block of whole periods */
    int contiguous = nd > 0 && (jc < 0 || jc == last) && g->d[last] < 256;
    int64_t st = 1;
    for (int j = last; contiguous && j >= 0; j--) {
        contiguous = g->sst[j] == st;
        st *= g->d[j];
    }
    if (contiguous) {
        /* blocks of whole periods that stay in L1 through every operation; the constants
         * repeated to a block (the same for every block: each starts at o0's phase) */
        size_t n = o1 - o0, period = (size_t)g->d[last];
        size_t blk = 256 / period * period;
        float rep[9][256];   /* the first 8 per-channel constants; rep[8]: any later one */
        for (int i = 0, v = 0; i < n_ops && v < 8; i++) {
            if (ops[i].count == 1) continue;
            for (size_t e = 0, ph = o0 % period; e < blk; e++) {
                rep[v][e] = ops[i].v[ph];
                if (++ph == period) ph = 0;
            }
            v++;
        }
        for (size_t at = 0; at < n; at += blk) {
            size_t len = n - at < blk ? n - at : blk;
            float *tb = t + at;
            /* float32 x: the first operation reads x itself */
            const float *src = tb;
            if (xt == QSIMD_FLOAT && n_ops > 0)
                src = (const float *)x + o0 + at;
            else
                load_row(x, xt, (int64_t)(o0 + at), 1, len, tb);
            for (int i = 0, v = 0; i < n_ops; i++, src = tb) {
                const chain_op *op = &ops[i];
                if (op->count == 1) {
                    apply_from(op->kind, tb, src, len, op->v[0]);
                    continue;
                }
                if (v >= 8)
                    for (size_t e = 0, ph = o0 % period; e < len; e++) {
                        rep[8][e] = op->v[ph];
                        if (++ph == period) ph = 0;
                    }
                apply_vector_from(op->kind, tb, src, len, rep[v < 8 ? v : 8]);
                v++;
            }
        }
        return;
    }
    for (int j = last; j >= 0; j--) {
        idx[j] = (int64_t)(rem % (size_t)g->d[j]);
        rem /= (size_t)g->d[j];
        src += idx[j] * g->sst[j];
    }
    for (size_t o = o0; o < o1;) {
        size_t len = nd ? (size_t)(g->d[last] - idx[last]) : 1;
        if (len > o1 - o) len = o1 - o;
        int64_t s = nd ? g->sst[last] : 0;
        float *row = t + (o - o0);
        load_row(x, xt, src, s, len, row);
        for (int i = 0; i < n_ops; i++) {
            const chain_op *op = &ops[i];
            if (op->count == 1)
                apply_scalar(op->kind, row, len, op->v[0]);
            else if (jc == last)
                apply_vector(op->kind, row, len, op->v + idx[last]);
            else
                apply_scalar(op->kind, row, len, op->v[idx[jc]]);
        }
        o += len;
        if (nd == 0) break;
        idx[last] += (int64_t)len;
        src += (int64_t)len * s;
        for (int j = last; j > 0 && idx[j] == g->d[j]; j--) {
            src -= g->d[j] * g->sst[j];
            idx[j] = 0;
            idx[j - 1]++;
            src += g->sst[j - 1];
        }
    }
}

#define LOOKUP_ROW(XT, YT)                                                                  \
    do {                                                                                   \
        const XT *xs = (const XT *)x + src;                                                \
        YT *yd = (YT *)y + o;                                                              \
        const YT *tb = (const YT *)tp;                                                     \
        size_t i;                                                                          \
        if (per_elem)                                                                      \
            for (i = 0; i < len; i++)                                                      \
                yd[i] = tb[((size_t)idx[last] + i) * nv + xs[(int64_t)i * s]];             \
        else if (s == 1)                                                                   \
            for (i = 0; i < len; i++) yd[i] = tb[xs[i]];                                   \
        else                                                                               \
            for (i = 0; i < len; i++) yd[i] = tb[xs[(int64_t)i * s]];                      \
    } while (0)

/* y = table[channel][x bits], walking y in order (x read through the transpose); tab NULL:
 * y = x (elements of esize bytes), transposed. aff (NULL: none): the 8-bit tables' lines,
 * one per channel, which a vector loop may compute instead of looking up. */
static void lookup_all(size_t esize, const geom *g, int jc, const unsigned char *tab, size_t nv,
                       int xbytes, const chain_affine *aff, const char *x, char *y)
{
    (void)aff;   /* only the vector builds compute lines */
#ifdef CHAIN_FRAME3
    if (esize == 1 && xbytes == 1 && (aff || !tab) &&
        CHAIN_FRAME3(g, jc, aff, tab, (const uint8_t *)x, (uint8_t *)y))
        return;
#endif
    int64_t idx[QSIMD_MAX_DIMS], src = 0;
    int nd = g->nd, last = nd - 1;
    for (int j = 0; j < nd; j++) idx[j] = 0;
    for (size_t o = 0; o < g->n;) {
        size_t len = nd ? (size_t)g->d[last] : 1;
        int64_t s = nd ? g->sst[last] : 0;
        int per_elem = jc >= 0 && jc == last;
        const unsigned char *tp = !tab ? NULL : tab + (jc >= 0 && !per_elem
                                                       ? (size_t)idx[jc] * nv * esize : 0);
        if (!tab) {   /* no table: a transpose of codes already computed, esize bytes each */
            size_t done = 0;
#ifdef CHAIN_LOOKUP_U8
            if (esize == 1)
                done = CHAIN_LOOKUP_U8(NULL, (const uint8_t *)x + src, s, len, (uint8_t *)y + o,
                                       g->n - (size_t)src);
#endif
#define COPY_ROW(T)                                                                        \
            do {                                                                           \
                const T *xs = (const T *)x + src;                                          \
                T *yd = (T *)y + o;                                                        \
                for (size_t i = done; i < len; i++) yd[i] = xs[(int64_t)i * s];            \
            } while (0)
            if (esize == 1) COPY_ROW(uint8_t);
            else if (esize == 2) COPY_ROW(uint16_t);
            else COPY_ROW(uint32_t);
#undef COPY_ROW
        } else if (xbytes == 1) {
#ifdef CHAIN_LOOKUP_U8
            /* 8-bit codes from 8-bit inputs: the including file's vector loop takes the row
             * (it returns how many elements it did; the rest go below); it may read up to
             * the end of x (the last argument: bytes from the row's start) */
            if (esize == 1 && !per_elem) {
                size_t done = 0;
#ifdef CHAIN_AFFINE_U8
                if (aff)
                    done = CHAIN_AFFINE_U8(&aff[jc >= 0 ? idx[jc] : 0], (const uint8_t *)x + src,
                                           s, len, (uint8_t *)y + o, g->n - (size_t)src);
#endif
                if (!done)
                    done = CHAIN_LOOKUP_U8(tp, (const uint8_t *)x + src, s, len,
                                           (uint8_t *)y + o, g->n - (size_t)src);
                const uint8_t *xs = (const uint8_t *)x + src;
                uint8_t *yd = (uint8_t *)y + o;
                for (size_t i = done; i < len; i++) yd[i] = tp[xs[(int64_t)i * s]];
            } else
#endif
            if (esize == 1) LOOKUP_ROW(uint8_t, uint8_t);
            else if (esize == 2) LOOKUP_ROW(uint8_t, uint16_t);
            else LOOKUP_ROW(uint8_t, uint32_t);
        } else {
            if (esize == 1) LOOKUP_ROW(uint16_t, uint8_t);
            else if (esize == 2) LOOKUP_ROW(uint16_t, uint16_t);
            else LOOKUP_ROW(uint16_t, uint32_t);
        }
        o += len;
        if (nd <= 1) { if (nd == 0) break; continue; }
        idx[last - 1]++;
        src += g->sst[last - 1];
        for (int j = last - 1; j > 0 && idx[j] == g->d[j]; j--) {
            src -= g->d[j] * g->sst[j];
            idx[j] = 0;
            idx[j - 1]++;
            src += g->sst[j - 1];
        }
    }
}

#endif   /* CHAIN_TYPES_ONLY */

#endif
