/* chain_neon.c's entry (aarch64 builds only): the HWC -> CHW frame path of chain_impl.h's
 * table walk (CHAIN_FRAME3 there), 0 when g is not that layout. */
#ifndef QSIMD_OPS_CHAIN_NEON_H
#define QSIMD_OPS_CHAIN_NEON_H

#include <stdint.h>

struct geom;
struct chain_affine;
int qs_chain_frame3_neon(const struct geom *g, int jc, const struct chain_affine *f,
                         const unsigned char *tab, const uint8_t *x, uint8_t *y);

#endif
