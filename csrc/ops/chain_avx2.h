/* chain_avx2.c's entries (x86-64 builds with AVX2 kernels only). */
#ifndef QSIMD_OPS_CHAIN_AVX2_H
#define QSIMD_OPS_CHAIN_AVX2_H

#include "chain_impl.h"

void qs_chain_gather_avx2(const chain_op *ops, int n_ops, const geom *g, int jc, const char *x,
                          int32_t xt, size_t o0, size_t o1, float *t);
void qs_chain_lookup_avx2(size_t esize, const geom *g, int jc, const unsigned char *tab,
                          size_t nv, int xbytes, const chain_affine *aff, const char *x,
                          char *y);
/* A float32 frame (HWC -> CHW, three channels) through the chain and q in one pass; 0 when
 * g, jc or the chain do not fit (nothing written). */
int qs_chain_float3_avx2(const chain_op *ops, int n_ops, const geom *g, int jc,
                         const chain_fq *q, const float *x, uint8_t *y);

#endif
