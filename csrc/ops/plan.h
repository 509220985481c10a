/* The granularity plan (plan.c): x viewed as (outer, d, inner) around the axis, cut into
 * contiguous runs that each start on a scale-entry boundary, and the thread pool driven over
 * it. The pool (pool.h) knows nothing of plans: the plan tells it where pieces may end. */
#ifndef QSIMD_OPS_PLAN_H
#define QSIMD_OPS_PLAN_H

#include "types.h"
#include "pool.h"

enum { QS_PER_TENSOR, QS_PER_AXIS, QS_BLOCKED };

typedef struct qs_plan {
    int kind;
    size_t n;                 /* elements of x */
    size_t outer, d, inner;   /* x viewed as (outer, d, inner) around the axis */
    size_t s;                 /* scale entries along the axis (blocked: ceil(d / b)) */
    size_t b;                 /* block size */
    size_t entries;           /* scale entries in total */
} qs_plan;

/* Validates scale / zero point against x (CONTRACT.md "Validation") and builds the plan. */
int qs_make_plan(const qsimd_tensor *x, const qsimd_tensor *scale, const qsimd_tensor *zp,
                 int64_t axis, int64_t block_size, qs_plan *plan, qsimd_error *err);

/* One contiguous run for a kernel. */
typedef struct qs_run {
    size_t start;   /* first element of x / y */
    size_t n;
    size_t entry;   /* first scale entry */
    size_t blk;     /* elements per entry */
} qs_run;

/* Calls fn(ctx, run) for every run of the plan, in memory order; the _in form only for the
 * elements [a, b), whose ends must be valid cuts (below). */
typedef void (*qs_run_fn)(void *ctx, const qs_run *run);
void qs_for_each_run(const qs_plan *plan, qs_run_fn fn, void *ctx);
void qs_for_each_run_in(const qs_plan *plan, size_t a, size_t b, qs_run_fn fn, void *ctx);
/* 1 if work may be split before element `cut`: a run cut there still starts on an entry
 * boundary, and no packed byte (per_byte elements) straddles the cut. */
int qs_valid_cut(const qs_plan *plan, size_t cut, unsigned per_byte);

/* qs_pool_run over the plan's elements, cutting only where qs_valid_cut allows. */
int qs_parallel(const qs_plan *plan, int threads, unsigned per_byte, qs_piece_fn fn, void *ctx);

#endif
