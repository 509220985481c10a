/* Internal kernel interface: every instruction set fills one qk_table.
 *
 * A kernel processes ONE run of n consecutive elements of a call's tensor (flattened in C
 * order). The parameter entry (scale, zero point) of element i of the run is
 *     entry(j) = (j / row) * erow + ((j % row) / blk) * K + j % K - ebase,   j = pos + i,
 * with K = max(kdim, 1) (K = 1: the last term is 0) and row = 0 meaning "no rows" (j / row
 * is 0, j % row is j). Every layout of QuantizeLinear / DequantizeLinear is one such formula:
 *   per-tensor            blk >= pos + n (one entry)
 *   per-axis (D, inner)   row = D * inner, erow = 0, blk = inner
 *   per-axis, last axis   kdim = D, blk = SIZE_MAX (entry j % D)
 *   blocked, last axis    row = D, erow = ceil(D / B), blk = B (a row's last block may be short)
 *   blocked, inner > 1    row = D * inner, erow = ceil(D / B) * inner, blk = B * inner,
 *                         kdim = inner (B rows of `inner` elements share a row of entries)
 * A plain run (pos, row, erow, kdim, ebase all 0) uses entry i / blk. The parameter arrays
 * are indexed by entry - ebase and hold every entry the run uses (with kdim > 1, the whole
 * rows of K entries it touches). Kernels never allocate, never validate, and never touch memory
 * outside [x, x + n elements) and [y, y + n elements) (packed: the bytes holding them).
 */
#ifndef QSIMD_KERNELS_H
#define QSIMD_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Input element type of QuantizeLinear. */
enum { QK_X_F32, QK_X_F16, QK_X_BF16, QK_X_I32, QK_NX };

/* Precision of x / scale (docs/CONTRACT.md rule 1). For F16/BF16 the input is rounded to that
 * type, divided in float32 (correctly rounded) and the quotient rounded to that type again;
 * double rounding through float32 is exact for division at these widths. F64: x and the
 * scale are widened to double and divided there. */
enum { QK_Q_F32, QK_Q_F16, QK_Q_BF16, QK_Q_F64, QK_NQ };

/* Output kind of QuantizeLinear. */
enum {
    QK_Y_B8,   /* one byte per element: u8, i8 and unpacked u4/i4/u2/i2 (code & mask) */
    QK_Y_B16,  /* u16 / i16 (two's complement low 16 bits) */
    QK_Y_P4,   /* packed u4/i4: two per byte, element 0 in the low nibble */
    QK_Y_P2,   /* packed u2/i2: four per byte, element 0 in the lowest bits */
    /* Float outputs: q = x / scale as above (same quotient precision), not rounded to an
     * integer, then converted (convert.h). */
    QK_Y_E4M3FN,    /* float8, one byte each; p->saturate; zero point ignored */
    QK_Y_E4M3FNUZ,
    QK_Y_E5M2,
    QK_Y_E5M2FNUZ,
    QK_Y_E2M1,      /* float4, one per byte (low nibble); q + p->zpf added in float first */
    QK_Y_PE2M1,     /* float4 packed two per byte as QK_Y_P4 (p->phase), zpf as QK_Y_E2M1 */
    QK_Y_B32,       /* i32 / u32: range p->qmin64..qmax64, zero point p->zp64 (int64) */
    QK_Y_F16,       /* AMD Quark: f16(q + zpf), the sum in float32 */
    QK_Y_BF16,      /* AMD Quark: bf16(q + zpf), the sum in float32 */
    /* float6 (opset 28), appended so that tables filled by position stay valid; as
     * QK_Y_E2M1 (zpf added in float, always saturating). Packed: 4 codes in 3 bytes, element
     * 0 in the lowest bits (ONNX), p->phase the slot (0..3) of element 0 in the 3-byte group
     * starting at y[0]. */
    QK_Y_E2M3,      /* one per byte (low 6 bits) */
    QK_Y_PE2M3,
    QK_Y_E3M2,
    QK_Y_PE3M2,
    QK_NY
};

/* Input kind of DequantizeLinear. */
enum {
    QK_D_B8,   /* one byte per element; p->bits (8, 4, 2) low bits hold the code, p->is_signed */
    QK_D_B16,  /* u16 / i16 by p->is_signed */
    QK_D_P4,   /* packed 4-bit, p->is_signed, p->phase */
    QK_D_P2,   /* packed 2-bit, p->is_signed, p->phase */
    QK_D_B32,  /* i32 / u32 by p->is_signed; exact int64 subtraction with zp64 */
    /* float inputs: y = round_to_output(float32(x) * scale); float8 zero points are zero
     * (checked by the operator layer) and float4 zero points are ignored, as ONNX does */
    QK_D_E4M3FN,
    QK_D_E4M3FNUZ,
    QK_D_E5M2,
    QK_D_E5M2FNUZ,
    QK_D_E2M1,   /* float4 one per byte, low nibble (high bits ignored) */
    QK_D_PE2M1,  /* float4 packed, p->phase as QK_D_P4 */
    QK_D_F16,    /* AMD Quark: (float32(x) - p->zpf) * scale, the difference in float32 */
    QK_D_BF16,
    /* float6, one per byte (low 6 bits) or packed as QK_Y_PE2M3 (p->phase in the group);
     * y = (float32(x) - zpf) * scale when zpf is given: ONNX subtracts float6 zero points */
    QK_D_E2M3,
    QK_D_PE2M3,
    QK_D_E3M2,
    QK_D_PE3M2,
    QK_ND
};

/* Output type of DequantizeLinear. */
enum {
    QK_O_F32, QK_O_F16, QK_O_BF16,
    QK_O_E8M0,   /* the float32 product rounded to e8m0 as ml_dtypes does (an e8m0 scale) */
    QK_NO
};

typedef struct qk_qparams {
    const float *scale;     /* entries as float32, already rounded to the quotient precision */
    const double *scale64;  /* QK_Q_F64 only: entries as double */
    const int32_t *zp;      /* zero point per entry, NULL = all zero */
    size_t blk;             /* elements per entry (>= 1); blk >= n means a single entry */
    int32_t qmin, qmax;     /* output range; the zero point lies inside it */
    uint32_t mask;          /* QK_Y_B8: bits kept in each byte (0xff, 0x0f, 0x03) */
    unsigned phase;         /* QK_Y_P4/P2/PE2M1: slot of element 0 inside byte y[0];
                             * packed float6: slot inside the 3-byte group at y[0] */
    /* appended for the float and 32-bit outputs */
    int saturate;           /* float8: 1 clip to +-max (NaN stays NaN), 0 overflow to inf/NaN */
    const float *zpf;       /* QK_Y_E2M1/PE2M1/F16/BF16/float6: zero point per entry as float32;
                             * NULL = no zero point (nothing is added, so -0 stays -0) */
    const int64_t *zp64;    /* QK_Y_B32: zero point per entry, NULL = all zero */
    int64_t qmin64, qmax64; /* QK_Y_B32: output range */
    int stream;             /* 1: the whole call is too large to stay in the caches, so long
                             * runs may write y with non-temporal stores (same results); the
                             * caller fences them (qs_fence_streams) after its last run */
    const float *rscale;    /* per entry qk_recip(scale[e]), all nonzero: SIMD kernels may
                             * replace x / s by the exact reciprocal form
                             * (docs/EXACT-DIVISION.md); NULL when some entry of the run is
                             * outside its range: divide. The scalar kernels always divide. */
    /* the layout (see the top of this file); zero: a plain run */
    size_t pos, row, erow, kdim, ebase;
    int negs;               /* some scale entry of the run may be negative (SIMD kernels then
                             * bound the quotient instead of x) */
} qk_qparams;

/* Packed 6-bit codes (ONNX float6): slot k (0..3) of the 3-byte group g occupies bits
 * 6k .. 6k+5 of g[0] | g[1] << 8 | g[2] << 16. Only the bytes the slot overlaps are touched. */
static inline uint32_t qk_get6(const uint8_t *g, unsigned slot)
{
    unsigned bit = slot * 6u, k = bit / 8u, sh = bit % 8u;
    uint32_t v = (uint32_t)g[k] >> sh;
    if (sh > 2u) v |= (uint32_t)g[k + 1] << (8u - sh);
    return v & 0x3fu;
}

static inline void qk_put6(uint8_t *g, unsigned slot, uint32_t c)
{
    unsigned bit = slot * 6u, k = bit / 8u, sh = bit % 8u;
    c &= 0x3fu;
    g[k] = (uint8_t)((g[k] & ~(0x3fu << sh)) | (c << sh));
    if (sh > 2u) g[k + 1] = (uint8_t)((g[k + 1] & ~(0x3fu >> (8u - sh))) | (c >> (8u - sh)));
}

/* Scales for which the reciprocal form  q0 = x*r, e = fma(-q0, s, x), q1 = fma(e, r, q0)
 * with r = RN(1/s) rounds to the same integer / float8 / float4 / float16 / bfloat16 output
 * as the correctly rounded x / s, for every float32 x (docs/EXACT-DIVISION.md). */
#define QK_RECIP_MIN 0x1p-83f
#define QK_RECIP_MAX 0x1p100f

/* The reciprocal entry of a scale already rounded to the quotient precision: RN(1/s), or 0
 * (divide) outside [QK_RECIP_MIN, QK_RECIP_MAX] in magnitude, for 0, inf and NaN. */
static inline float qk_recip(float s)
{
    float a = s < 0.0f ? -s : s;
    return a >= QK_RECIP_MIN && a <= QK_RECIP_MAX ? 1.0f / s : 0.0f;
}

typedef struct qk_dparams {
    const float *scale;     /* entries as float32 */
    const int32_t *zp;      /* zero point per entry (<= 16-bit inputs), NULL = all zero */
    const int64_t *zp64;    /* QK_D_B32 only, NULL = all zero */
    size_t blk;             /* as in qk_qparams */
    unsigned bits;          /* QK_D_B8: 8, 4 or 2 */
    int is_signed;
    unsigned phase;         /* QK_D_P4/P2/PE2M1: slot of element 0 inside byte x[0];
                             * packed float6: slot inside the 3-byte group at x[0] */
    /* appended for the float inputs */
    const float *zpf;       /* QK_D_F16/BF16/float6: zero point per entry as float32, NULL =
                             * none */
    int stream;             /* as in qk_qparams */
    size_t pos, row, erow, kdim, ebase;   /* the layout, as in qk_qparams */
} qk_dparams;

/* The entry of element i of a run, and how many elements from i on share it (at least 1;
 * with kdim > 1 every element has its own). */
static inline size_t qk_entry(size_t blk, size_t pos, size_t row, size_t erow, size_t kdim,
                              size_t ebase, size_t i, size_t *len)
{
    size_t j = pos + i, o = row ? j % row : j, b = blk ? blk : 1, e;
    e = (row ? j / row * erow : 0) + o / b * (kdim > 1 ? kdim : 1);
    if (kdim > 1) {
        *len = 1;
        return e + j % kdim - ebase;
    }
    *len = b - o % b;
    if (row && row - o < *len) *len = row - o;
    return e - ebase;
}
#define QK_QENTRY(p, i, len) \
    qk_entry((p)->blk, (p)->pos, (p)->row, (p)->erow, (p)->kdim, (p)->ebase, (i), (len))

/* y[i] = saturate(rint(x[i] / scale) + zp); NaN -> qmin (docs/CONTRACT.md rules 1-3); the float
 * output kinds convert q (+ zpf) instead, see QK_Y_E4M3FN and below.
 * Packed outputs: bytes wholly inside the run are overwritten; the first and last byte are
 * read-modify-written so that neighbouring runs (and zero padding) are preserved. */
typedef void (*qk_quant_fn)(const void *x, void *y, size_t n, const qk_qparams *p);

/* y[i] = round_to_output(float32(x[i] - zp) * scale). */
typedef void (*qk_dequant_fn)(const void *x, void *y, size_t n, const qk_dparams *p);

/* NaN-ignoring min and max of x[0..n). With no non-NaN element: *mn = +inf, *mx = -inf. */
typedef void (*qk_minmax_fn)(const float *x, size_t n, float *mn, float *mx);

/* Column ranges: lo[i] / hi[i] = the NaN-ignoring min / max of x[r * stride + i] over rows
 * r < rows (rows >= 1), for i < m, each as the scalar loop over the rows finds it (with no
 * non-NaN element: +inf / -inf). */
typedef void (*qk_minmax_cols_fn)(const float *x, size_t rows, size_t stride, size_t m,
                                  float *lo, float *hi);

/* Group ranges: lo[k] / hi[k] = the NaN-ignoring min / max of x[k * b .. k * b + b) for
 * k < g (b >= 1; with no non-NaN element: +inf / -inf); a zero result may have either sign
 * (callers read its value only). */
typedef void (*qk_minmax_groups_fn)(const float *x, size_t g, size_t b, float *lo, float *hi);

/* r[i] = 1.0f / s[i] for i < n (r NULL: none; entries outside the range below are flagged and
 * their r[i] unspecified), and flags over s[0..n): QK_RECIP_OUT when
 * some |s| lies outside [QK_RECIP_MIN, QK_RECIP_MAX] (0, subnormals, inf and NaN too),
 * QK_RECIP_NEG when some sign bit is set. */
enum { QK_RECIP_OUT = 1, QK_RECIP_NEG = 2 };
typedef unsigned (*qk_recip_fn)(const float *s, float *r, size_t n);

/* z[i] = the i-th zero point of src as int32, i < n: dk QK_D_B8 (bytes; bits 8, or 4 / 2 for
 * sub-byte codes one per byte, whose high bits are ignored) or QK_D_B16 (16-bit, native
 * order), sgn 1 signed, 0 unsigned. */
typedef void (*qk_widen_fn)(const void *src, int32_t *z, size_t n, int dk, int sgn,
                            unsigned bits);

typedef struct qk_table {
    const char *name;
    const struct qk_table *base;   /* where an entry left NULL comes from (NULL: scalar) */
    qk_quant_fn quant[QK_NX][QK_NQ][QK_NY];
    qk_dequant_fn dequant[QK_ND][QK_NO];
    qk_minmax_fn minmax_f32;
    qk_recip_fn recip_f32;
    qk_widen_fn widen_zp;
    qk_minmax_cols_fn minmax_cols;
    qk_minmax_groups_fn minmax_groups;
} qk_table;

/* Tables. An ISA table may leave entries NULL; dispatch takes them from its base table
 * (AVX-512's is AVX2's: every AVX-512 CPU runs AVX2), else from the scalar table. */
extern const qk_table qk_scalar_table;
#if defined(QSIMD_HAVE_X86)
extern const qk_table qk_sse41_table;
extern const qk_table qk_avx2_table;
extern const qk_table qk_avx512_table;
#endif
#if defined(QSIMD_HAVE_NEON)
extern const qk_table qk_neon_table;
#endif

/* The scalar kernels, exported so SIMD kernels can finish tails and unusual block sizes. */
void qk_quant_scalar(int xk, int qk, int yk, const void *x, void *y, size_t n,
                     const qk_qparams *p);
void qk_dequant_scalar(int dk, int ok, const void *x, void *y, size_t n,
                       const qk_dparams *p);

#ifdef __cplusplus
}
#endif
#endif
