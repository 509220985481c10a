/* The MX / BFP operators (mxbfp.c; public entry points in qsimd.h): the active instruction
 * set's kernel (kernels/mxbfp.h) over a whole tensor, on the thread pool for large inputs. */
#ifndef QSIMD_OPS_MXBFP_H
#define QSIMD_OPS_MXBFP_H

#include "../kernels/mxbfp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* x: outer * len * inner float32; s: outer * ceil(len / block) * inner codes. */
void qs_mxscales_run(const float *x, uint8_t *s, size_t outer, size_t len, size_t inner,
                     size_t block, int shift, int threads);

/* x and y: outer * len * inner float32 (y may be x). Chooses the active ISA's kernel and up
 * to `threads` threads (0: the default) over the outer index and whole blocks. */
void qs_mxbfp_run(const float *x, float *y, size_t outer, size_t len, size_t inner,
                  const qk_mxbfp *c, int threads);

#ifdef __cplusplus
}
#endif
#endif
