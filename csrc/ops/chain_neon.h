/* chain_neon.c's entries (aarch64 builds only): the HWC -> CHW frame path of chain_impl.h's
 * table walk (CHAIN_FRAME3 there) and of float32 frames, 0 when g is not that layout. */
#ifndef QSIMD_OPS_CHAIN_NEON_H
#define QSIMD_OPS_CHAIN_NEON_H

#include <stdint.h>

struct geom;
struct chain_affine;
struct chain_op;
struct chain_fq;
int qs_chain_frame3_neon(const struct geom *g, int jc, const struct chain_affine *f,
                         const unsigned char *tab, const uint8_t *x, uint8_t *y);
/* A float32 frame (HWC -> CHW, three channels) through the chain and q in one pass (chain.c's
 * float path when NEON is active); 0 when g or jc do not fit (nothing written). */
int qs_chain_float3_neon(const struct chain_op *ops, int n_ops, const struct geom *g, int jc,
                         const struct chain_fq *q, const float *x, uint8_t *y);

#endif
