/* The granularity plan (plan.c): x viewed as (outer, d, inner) around the axis, cut into
 * contiguous runs that each start on a scale-entry boundary, and where work may be cut. It
 * depends on nothing but the type facts; the thread pool (pool.h) reads it. */
#ifndef QSIMD_OPS_PLAN_H
#define QSIMD_OPS_PLAN_H

#include "types.h"

enum { QS_PER_TENSOR, QS_PER_AXIS, QS_BLOCKED };

typedef struct qs_plan {
    int kind;
    size_t n;                 /* elements of x */
    size_t outer, d, inner;   /* x viewed as (outer, d, inner) around the axis */
    size_t s;                 /* scale entries along the axis (blocked: ceil(d / b)) */
    size_t b;                 /* block size */
    size_t entries;           /* scale entries in total */
} qs_plan;

/* Validates scale / zero point against x (docs/CONTRACT.md "Validation") and builds the plan. */
int qs_make_plan(const qsimd_tensor *x, const qsimd_tensor *scale, const qsimd_tensor *zp,
                 int64_t axis, int64_t block_size, qs_plan *plan, qsimd_error *err);

/* One contiguous run for a kernel. */
typedef struct qs_run {
    size_t start;   /* first element of x / y */
    size_t n;
    size_t entry;   /* first scale entry */
    size_t blk;     /* elements per entry */
} qs_run;

/* The runs of the plan that overlap elements [a, b), in memory order and clipped to it:
 *   qs_runs it; qs_run r;
 *   for (qs_runs_start(&it, plan, a, b); qs_runs_next(&it, &r);) ...
 * a and b must be valid cuts (below), so each clipped run starts on an entry boundary. */
typedef struct qs_runs {
    const qs_plan *plan;
    size_t a, b;
    size_t i, end;   /* next and one-past-last slab / row index */
} qs_runs;
void qs_runs_start(qs_runs *it, const qs_plan *plan, size_t a, size_t b);
int qs_runs_next(qs_runs *it, qs_run *run);
/* 1 if work may be split before element `cut`: a run cut there still starts on an entry
 * boundary, and no packed byte (per_byte elements) straddles the cut. */
int qs_valid_cut(const qs_plan *plan, size_t cut, unsigned per_byte);
/* A valid cut at or after `want` (the first few candidates are tried), else `limit`. */
size_t qs_next_cut(const qs_plan *plan, unsigned per_byte, size_t want, size_t limit);

#endif
