/* Internal: the active kernel table and lookups that fall back to the scalar entries. */
#ifndef QSIMD_DISPATCH_H
#define QSIMD_DISPATCH_H

#include "kernels/kernels.h"

const qk_table *qk_active(void);
qk_quant_fn qk_get_quant(const qk_table *t, int xk, int qk, int yk);
qk_dequant_fn qk_get_dequant(const qk_table *t, int dk, int ok);
qk_minmax_fn qk_get_minmax(const qk_table *t);
qk_recip_fn qk_get_recip(const qk_table *t);
qk_widen_fn qk_get_widen(const qk_table *t);
qk_minmax_cols_fn qk_get_minmax_cols(const qk_table *t);
qk_minmax_groups_fn qk_get_minmax_groups(const qk_table *t);

#endif
