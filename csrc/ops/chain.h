/* A preprocessing chain in front of a prepared QuantizeLinear (chain.c): float32 add / sub /
 * mul / div with constants, a transpose, then the prepared quantization. prepared.c owns the
 * parameters; the chain keeps pointers to them (they live as long as the prepared object). */
#ifndef QSIMD_OPS_CHAIN_H
#define QSIMD_OPS_CHAIN_H

#include "types.h"

typedef struct qs_chain qs_chain;

/* The prepared quantization the chain feeds. */
typedef struct qs_chain_q {
    const qsimd_tensor *scale;
    const qsimd_tensor *zp;         /* NULL: none */
    int32_t y_dtype, y_packed;
    qsimd_quantize_options opt;
} qs_chain_q;

/* Checks and copies the chain (errors name `pre` / `perm`); builds the 8-bit input tables
 * when the output allows tables. */
int qs_chain_make(const qs_chain_q *q, const qsimd_pre_op *ops, int32_t n_ops,
                  int64_t pre_axis, const int64_t *perm, int32_t perm_len, qs_chain **out,
                  qsimd_error *err);
/* One run: y (already checked to be of the prepared type) = quantize(perm(chain(x))). */
int qs_chain_run(qs_chain *c, const qsimd_tensor *x, const qsimd_tensor *y, qsimd_error *err);
void qs_chain_free(qs_chain *c);

#endif
