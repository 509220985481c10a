/* Scale and zero-point entries in the forms the kernels read (params.c). */
#ifndef QSIMD_OPS_PARAMS_H
#define QSIMD_OPS_PARAMS_H

#include "types.h"

/* Scale and zero-point entries in the forms the kernels read (float32 scales rounded to the
 * quotient precision, double scales, int32 / int64 / float zero points). Layouts that reuse
 * entries (per-tensor, per-axis, blocked on an outer axis) convert them all once; blocked
 * along the last axis, where each entry serves one block only and there can be n / 32 of
 * them, converts as many as QS_PARAM_POOL bytes hold (qs_params_room) at a time just before
 * the runs that use them, so a call never allocates or writes memory proportional to its size
 * for them. Only the forms the kernels read take room: float32 scales and uint8 zero points
 * to reciprocals and int32 zero points, 4096 entries; the longer a run, the less its setup
 * (rows of 7: 1024 entries a run spent a tenth of the call starting runs). */
#define QS_PARAM_POOL 32768
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
    int negs;                 /* some scale held has its sign bit set */
    void *heap;
    double pool[QS_PARAM_POOL / sizeof(double)];   /* the converted arrays, one after another */
} qs_params;

/* Entries converted once for a prepared object (prepared.c): a run whose qs_psrc asks for
 * the same forms of as many entries reads them instead of converting per call (16x4096
 * per-axis along the last axis: the conversion was a quarter of the call). Read-only once made,
 * so any number of threads may share it. */
typedef struct qs_pkept {
    int qk, has_zp;
    unsigned need;
    size_t entries;
    qs_params pp;
} qs_pkept;
#define QS_KEPT_MAX ((size_t)16 << 20)   /* bytes of converted entries a prepared object keeps */

/* The entries of src converted once; NULL when they would take more than QS_KEPT_MAX or
 * memory runs out (runs then convert per call, as without). */
qs_pkept *qs_params_keep(const qs_psrc *src);
/* k's entries when they are what src asks for, else NULL. */
const qs_params *qs_params_kept(const qs_pkept *k, const qs_psrc *src);
void qs_params_unkeep(qs_pkept *k);

/* Checks every entry that a kernel cannot take (float8 zero points must be zero:
 * QSIMD_ERR_VALUE) before anything is written. */
int qs_params_check(const qs_psrc *src, qsimd_error *err);

/* Entries of the forms src needs that pp's pool holds (at least 256). */
size_t qs_params_room(const qs_psrc *src);
/* Makes pp hold entries [e, e + m) (m <= qs_params_room; pp->count 0 at first), converting
 * the chunk that starts at e when it does not already. */
void qs_params_fetch(const qs_psrc *src, size_t e, size_t m, qs_params *pp);
/* Every entry, in pp's buffers or one heap block (pp->heap, the caller frees it);
 * QSIMD_ERR_NOMEM when that cannot be allocated. */
int qs_params_all(const qs_psrc *src, qs_params *pp, qsimd_error *err);

#endif
