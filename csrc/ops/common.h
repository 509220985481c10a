/* Internal helpers shared by the operators: errors, dtype facts, the granularity plan that
 * turns per-tensor / per-axis / blocked layouts into contiguous kernel runs, and the
 * widening of scales and zero points into the arrays the kernels read. */
#ifndef QSIMD_OPS_COMMON_H
#define QSIMD_OPS_COMMON_H

/* mingw's default MSVCRT printf lacks %zu: use its C99-conforming stdio instead */
#if defined(__MINGW32__) && !defined(__USE_MINGW_ANSI_STDIO)
#define __USE_MINGW_ANSI_STDIO 1
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qsimd.h"
#include "pool.h"

#if defined(__MINGW32__)
#define QS_PRINTF_FORMAT __MINGW_PRINTF_FORMAT
#else
#define QS_PRINTF_FORMAT printf
#endif
#include "../dispatch.h"

int qs_fail(qsimd_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(QS_PRINTF_FORMAT, 3, 4)))
#endif
    ;

const char *qs_dtype_name(int32_t dtype);
int qs_is_subbyte(int32_t dtype);            /* 4- and 2-bit types */
unsigned qs_bits(int32_t dtype);             /* element width in bits (0: unknown) */
int qs_int_range(int32_t dtype, int32_t *qmin, int32_t *qmax);   /* 0: not an int type <= 16 bit */

/* Element count of a tensor, checking ndim, negative dims and overflow. */
int qs_count(const qsimd_tensor *t, const char *name, size_t *n, qsimd_error *err);
/* Bytes a tensor's data occupies (packed sub-byte types: ceil). */
size_t qs_nbytes(int32_t dtype, int packed, size_t n);

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

/* Calls whose input and output together take at least this many bytes would not stay in the
 * caches: the kernels may write them with non-temporal stores (qk_qparams.stream). */
#define QS_STREAM_BYTES ((size_t)32 << 20)
int qs_stream(size_t in_bytes, size_t out_bytes);

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
int qs_is_float8(int32_t dtype);             /* the four float8 types (not e8m0) */

#endif
