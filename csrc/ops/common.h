/* What every operator file includes: errors and dtype facts (types.h), the granularity plan
 * (plan.h), the thread pool over a plan (pool.h), the parameter widening (params.h), the
 * elementwise run loop (exec.h) and the kernel tables (dispatch.h). Each of those depends
 * only on ones before it. */
#ifndef QSIMD_OPS_COMMON_H
#define QSIMD_OPS_COMMON_H

#include "types.h"
#include "plan.h"
#include "pool.h"
#include "params.h"
#include "exec.h"
#include "../dispatch.h"

/* The operators with entries a prepared object converted once (kept, or NULL: per call), and
 * those entries made for a prepared object (NULL: not kept). */
int qs_quantize(const qsimd_tensor *x, const qsimd_tensor *scale, const qsimd_tensor *zero_point,
                const qsimd_quantize_options *opt, const qsimd_tensor *y, const qs_pkept *kept,
                qsimd_error *err);
int qs_dequantize(const qsimd_tensor *x, const qsimd_tensor *scale,
                  const qsimd_tensor *zero_point, const qsimd_dequantize_options *opt,
                  const qsimd_tensor *y, const qs_pkept *kept, qsimd_error *err);
qs_pkept *qs_quantize_kept(const qsimd_tensor *scale, const qsimd_tensor *zp, int32_t y_dtype,
                           int32_t y_packed, int32_t precision);
qs_pkept *qs_dequantize_kept(const qsimd_tensor *scale, const qsimd_tensor *zp);

#endif
