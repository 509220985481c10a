/* The granularity plan: per-tensor / per-axis / blocked layouts as contiguous kernel runs,
 * where work may be cut, and the thread pool driven over the plan's elements. */
#include "plan.h"

#include <string.h>

static int64_t dim(const qsimd_tensor *t, int i) { return t->shape[i]; }

int qs_make_plan(const qsimd_tensor *x, const qsimd_tensor *scale, const qsimd_tensor *zp,
                 int64_t axis, int64_t block_size, qs_plan *plan, qsimd_error *err)
{
    size_t ns, nz = 0;
    int rc;
    memset(plan, 0, sizeof *plan);
    if ((rc = qs_count(x, "x", &plan->n, err)) != QSIMD_OK) return rc;
    if ((rc = qs_count(scale, "scale", &ns, err)) != QSIMD_OK) return rc;
    if (zp && (rc = qs_count(zp, "zero_point", &nz, err)) != QSIMD_OK) return rc;
    if (block_size < 0)
        return qs_fail(err, QSIMD_ERR_VALUE, "block_size must be >= 0, got %lld",
                       (long long)block_size);
    if (zp) {
        int same = nz == ns && zp->ndim == scale->ndim;
        for (int i = 0; same && i < zp->ndim; i++) same = dim(zp, i) == dim(scale, i);
        if (!same && !(nz == 1 && ns == 1))
            return qs_fail(err, QSIMD_ERR_VALUE,
                           "zero_point must have the shape of scale (%zu vs %zu elements%s)",
                           nz, ns, nz == ns ? ", different shapes" : "");
    }
    if (ns == 1) {   /* one element: per-tensor whatever axis and block_size say (as ONNX) */
        plan->kind = QS_PER_TENSOR;
        plan->outer = 1; plan->d = plan->n; plan->inner = 1;
        plan->s = 1; plan->b = plan->n; plan->entries = 1;
        return QSIMD_OK;
    }
    int r = x->ndim;
    if (r == 0)
        return qs_fail(err, QSIMD_ERR_VALUE,
                       "scale must have one element for a 0-d x, got %zu elements", ns);
    if (axis < -r || axis >= r)
        return qs_fail(err, QSIMD_ERR_VALUE, "axis %lld is out of range for x of rank %d "
                       "(expected -%d <= axis <= %d)", (long long)axis, r, r, r - 1);
    int a = (int)(axis < 0 ? axis + r : axis);
    plan->outer = 1; plan->inner = 1;
    for (int i = 0; i < a; i++) plan->outer *= (size_t)dim(x, i);
    for (int i = a + 1; i < r; i++) plan->inner *= (size_t)dim(x, i);
    plan->d = (size_t)dim(x, a);
    if (block_size == 0) {
        if (scale->ndim != 1)
            return qs_fail(err, QSIMD_ERR_VALUE, "scale must be a scalar or 1-D for per-axis "
                           "quantization (block_size=0), got rank %d", (int)scale->ndim);
        if ((size_t)dim(scale, 0) != plan->d)
            return qs_fail(err, QSIMD_ERR_VALUE, "scale has %lld entries but x.shape[%d] is %zu "
                           "(per-axis scale must match the axis length)",
                           (long long)dim(scale, 0), a, plan->d);
        plan->kind = QS_PER_AXIS;
        plan->s = plan->d; plan->b = 1; plan->entries = plan->d;
        return QSIMD_OK;
    }
    if (scale->ndim != r)
        return qs_fail(err, QSIMD_ERR_VALUE, "scale must have the rank of x (%d) for blocked "
                       "quantization, got rank %d", r, (int)scale->ndim);
    for (int i = 0; i < r; i++)
        if (i != a && dim(scale, i) != dim(x, i))
            return qs_fail(err, QSIMD_ERR_VALUE, "scale.shape[%d] is %lld but x.shape[%d] is "
                           "%lld (blocked scales match x except along axis)", i,
                           (long long)dim(scale, i), i, (long long)dim(x, i));
    size_t s = (size_t)dim(scale, a), b = (size_t)block_size;
    size_t want = plan->d / b + (plan->d % b != 0);
    if (s != want)
        return qs_fail(err, QSIMD_ERR_VALUE, "block_size %zu does not fit: x.shape[%d] = %zu "
                       "needs scale.shape[%d] = ceil(%zu/%zu) = %zu, got %zu", b, a, plan->d,
                       a, plan->d, b, want, s);
    plan->kind = QS_BLOCKED;
    plan->s = s; plan->b = b; plan->entries = ns;
    return QSIMD_OK;
}

/* Emits run r clipped to the window [a, b). Windows are cut only where qs_valid_cut allows,
 * so a clipped run starts on an entry boundary (or the run has a single entry). */
static void emit(const qs_run *r, size_t a, size_t b, qs_run_fn fn, void *ctx)
{
    size_t lo = r->start > a ? r->start : a, end = r->start + r->n, hi = end < b ? end : b;
    if (lo >= hi) return;
    qs_run c = *r;
    c.start = lo;
    c.n = hi - lo;
    c.entry = r->entry + (lo - r->start) / r->blk;
    fn(ctx, &c);
}

void qs_for_each_run_in(const qs_plan *p, size_t a, size_t b, qs_run_fn fn, void *ctx)
{
    qs_run run;
    if (b > p->n) b = p->n;
    if (a >= b) return;
    if (p->kind == QS_PER_TENSOR) {
        run.start = 0; run.n = p->n; run.entry = 0; run.blk = p->n;
        emit(&run, a, b, fn, ctx);
        return;
    }
    if (p->kind == QS_BLOCKED && p->inner == 1 && p->d % p->b == 0) {
        /* rows of whole blocks: entry i / b runs on from row to row, so one run covers all
         * (a short last block needs a run per row) */
        run.start = 0; run.n = p->n; run.entry = 0; run.blk = p->b;
        emit(&run, a, b, fn, ctx);
        return;
    }
    size_t slab = p->d * p->inner;
    if (p->kind == QS_PER_AXIS || p->inner == 1) {
        /* per-axis: the whole (d, inner) slab, entry = index / inner;
         * blocked along the last axis: one row, entry = index / b */
        for (size_t o = a / slab; o <= (b - 1) / slab; o++) {
            run.start = o * slab;
            run.n = p->kind == QS_PER_AXIS ? slab : p->d;
            run.entry = p->kind == QS_PER_AXIS ? 0 : o * p->s;
            run.blk = p->kind == QS_PER_AXIS ? p->inner : p->b;
            emit(&run, a, b, fn, ctx);
        }
        return;
    }
    /* blocked on an outer axis: each row of `inner` elements reads a row of entries */
    for (size_t r = a / p->inner; r <= (b - 1) / p->inner; r++) {
        size_t o = r / p->d, d = r % p->d;
        run.start = r * p->inner; run.n = p->inner;
        run.entry = (o * p->s + d / p->b) * p->inner; run.blk = 1;
        emit(&run, a, b, fn, ctx);
    }
}

void qs_for_each_run(const qs_plan *p, qs_run_fn fn, void *ctx)
{
    qs_for_each_run_in(p, 0, p->n, fn, ctx);
}

int qs_valid_cut(const qs_plan *p, size_t cut, unsigned per_byte)
{
    if (per_byte > 1 && cut % per_byte) return 0;   /* packed bytes are never shared */
    if (p->kind == QS_PER_AXIS) return cut % p->inner == 0;
    if (p->kind == QS_BLOCKED && p->inner == 1) return (cut % p->d) % p->b == 0;
    return 1;   /* one entry per run, or one entry per element */
}

/* A valid cut at or after `want` (the first few candidates are tried), else `limit`. */
typedef struct { const qs_plan *plan; unsigned per_byte; } cut_ctx;

static size_t next_cut(const void *ctx, size_t want, size_t limit)
{
    const cut_ctx *c = (const cut_ctx *)ctx;
    const qs_plan *p = c->plan;
    size_t row = 0, off = want, period = limit, step = 1;   /* per-tensor: any element */
    if (p->kind == QS_PER_AXIS) {
        step = p->inner;             /* channel starts */
    } else if (p->kind == QS_BLOCKED && p->inner == 1) {
        period = p->d; step = p->b;  /* block starts inside each row */
        row = want / period; off = want % period;
    }
    off = (off + step - 1) / step * step;
    for (int tries = 0; tries < 16; tries++) {
        if (off >= period) { row++; off = 0; }
        size_t cut = row * period + off;
        if (cut >= limit) break;
        if (qs_valid_cut(p, cut, c->per_byte)) return cut;
        off += step;
    }
    return limit;
}

int qs_parallel(const qs_plan *plan, int threads, unsigned per_byte, qs_piece_fn fn, void *ctx)
{
    cut_ctx c = {plan, per_byte};
    return qs_pool_run(plan->n, threads, next_cut, &c, fn, ctx);
}
