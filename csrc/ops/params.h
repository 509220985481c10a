/* Scale and zero-point entries in the forms the kernels read (params.c). */
#ifndef QSIMD_OPS_PARAMS_H
#define QSIMD_OPS_PARAMS_H

#include "plan.h"

/* Scale and zero-point entries in the forms the kernels read (float32 scales rounded to the
 * quotient precision, double scales, int32 / int64 / float zero points). Layouts that reuse
 * entries (per-tensor, per-axis, blocked on an outer axis) convert them all once; blocked
 * along the last axis, where each entry serves one block only and there can be n / 32 of
 * them, converts QS_CHUNK_ENTRIES at a time just before the runs that use them, so a call
 * never allocates or writes memory proportional to its size for them. */
#define QS_CHUNK_ENTRIES 256
enum { QS_NEED_SCALE64 = 1, QS_NEED_ZP64 = 2, QS_NEED_ZPF = 4, QS_NEED_RSCALE = 8 };

typedef struct qs_psrc {
    const qsimd_tensor *scale;
    const qsimd_tensor *zp;   /* NULL: no zero point (the kernels read NULL as all zero) */
    size_t entries;
    int qk;                   /* QK_Q_*: precision the float32 scales are rounded to */
    unsigned need;            /* QS_NEED_*: the other forms a kernel will read */
} qs_psrc;

/* Entry e of the call is element e - first of each array; an array is NULL when the kernels
 * must not read it. */
typedef struct qs_params {
    const float *scale;
    const double *scale64;
    const int32_t *zp;
    const int64_t *zp64;
    const float *zpf;
    const float *rscale;      /* qk_recip of each float32 scale (QS_NEED_RSCALE) */
    size_t first, count;      /* entries held: [first, first + count); count 0: none */
    void *heap;
    float scale_buf[QS_CHUNK_ENTRIES];
    double scale64_buf[QS_CHUNK_ENTRIES];
    int32_t zp_buf[QS_CHUNK_ENTRIES];
    int64_t zp64_buf[QS_CHUNK_ENTRIES];
    float zpf_buf[QS_CHUNK_ENTRIES];
    float rscale_buf[QS_CHUNK_ENTRIES];
} qs_params;

/* Checks every entry that a kernel cannot take (float8 zero points must be zero:
 * QSIMD_ERR_VALUE) before anything is written. */
int qs_params_check(const qs_psrc *src, qsimd_error *err);

/* Runs fn(ctx, run, pp) over the plan's runs, in pieces cut by qs_parallel on up to
 * `threads` threads, with pp holding the run's entries; `stream`: each piece fences its
 * non-temporal stores at its end. QSIMD_ERR_NOMEM when the entries to convert at once cannot
 * be allocated (nothing written then). */
typedef void (*qs_prun_fn)(void *ctx, const qs_run *run, const qs_params *pp);
int qs_parallel_params(const qs_plan *plan, const qs_psrc *src, int threads, unsigned per_byte,
                       int stream, qs_prun_fn fn, void *ctx, qsimd_error *err);

#endif
