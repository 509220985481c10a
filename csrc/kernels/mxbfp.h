/* AMD Quark's MXQuantizeDequantize and BFPQuantizeDequantize (domain com.amd.quark):
 * float32 in, float32 out, blocks along one axis. The semantics (bit for bit the results of
 * Quark 0.13's CPU kernels, except where README.md says otherwise) are documented in
 * qsimd/quark.py. kernels/mxbfp_impl.h holds the rules element by element (the scalar
 * kernel); kernels/mxbfp_simd.h the vector kernel, written once over a small vector layer
 * that mxbfp_avx2.c, mxbfp_avx512.c and mxbfp_neon.c each define. They differ in speed,
 * never in results (IEEE operations only). */
#ifndef QSIMD_MXBFP_H
#define QSIMD_MXBFP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { QK_MX_FLOAT, QK_MX_INT8, QK_BFP, QK_BFP_PRIME };

typedef struct qk_mxbfp {
    int method;           /* QK_MX_FLOAT, QK_MX_INT8, QK_BFP, QK_BFP_PRIME */
    int emax;             /* MX: the element type's largest exponent (int8: 0) */
    int emin;             /* MX float: the smallest normal exponent, 1 - bias */
    int mbits;            /* MX float: mantissa bits; BFP: bit_width - 9 (1..23) */
    float max_norm;       /* MX float: the largest magnitude */
    int rounding;         /* MX int8 and BFP: 0 half away from zero, 1 half up, 2 half even */
    int to_bfloat;        /* BFP: round x to bfloat16 first (NaN kept) */
    size_t block;         /* elements per block along the axis (>= 1) */
    size_t sub_block;     /* BFP prime: divides block */
    uint32_t shift_max;   /* BFP prime: 2^sub_block_shift_bits - 1 */
} qk_mxbfp;

/* `outer` consecutive slabs, each `len` rows along the axis times `inner` contiguous columns
 * (row stride inner). Blocks run along the rows from each slab's row 0; the last one may be
 * short. y may equal x (in place); nothing outside the outer * len * inner elements is read
 * or written. */
typedef void (*qk_mxbfp_fn)(const float *x, float *y, size_t outer, size_t len, size_t inner,
                            const qk_mxbfp *c);

void qk_mxbfp_scalar(const float *x, float *y, size_t outer, size_t len, size_t inner,
                     const qk_mxbfp *c);
/* Columns col .. col + count - 1 of one block of n rows (row stride inner), by the scalar
 * rules: what the vector kernels leave to them (blocks with NaN / inf or only tiny or huge
 * values, very long blocks along a middle axis). */
void qk_mxbfp_scalar_cols(const float *x, float *y, size_t n, size_t inner, size_t col,
                          size_t count, const qk_mxbfp *c);
#if defined(QSIMD_HAVE_X86)
void qk_mxbfp_avx2(const float *x, float *y, size_t outer, size_t len, size_t inner,
                   const qk_mxbfp *c);
void qk_mxbfp_avx512(const float *x, float *y, size_t outer, size_t len, size_t inner,
                     const qk_mxbfp *c);
#endif

/* OCP MX e8m0 scale codes of a slab (kernels/mxbfp_impl.h). */
typedef void (*qk_mxscales_fn)(const float *x, uint8_t *s, size_t len, size_t inner,
                               size_t block, int shift);
void qk_mxscales_scalar(const float *x, uint8_t *s, size_t len, size_t inner, size_t block,
                        int shift);
#if defined(QSIMD_HAVE_X86)
void qk_mxscales_avx2(const float *x, uint8_t *s, size_t len, size_t inner, size_t block,
                      int shift);
void qk_mxscales_avx512(const float *x, uint8_t *s, size_t len, size_t inner, size_t block,
                        int shift);
#endif

#if defined(QSIMD_HAVE_NEON)
void qk_mxbfp_neon(const float *x, float *y, size_t outer, size_t len, size_t inner,
                   const qk_mxbfp *c);
void qk_mxscales_neon(const float *x, uint8_t *s, size_t len, size_t inner, size_t block,
                      int shift);
#endif

#ifdef __cplusplus
}
#endif
#endif
